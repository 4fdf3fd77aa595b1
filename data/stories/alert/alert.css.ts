import { createStyles } from 'plaited'
import { alertTokens } from './alert.tokens.ts'

export const styles = createStyles({
  alert: {
    display: 'flex',
    alignItems: 'flex-start',
    gap: '0.75rem',
    padding: '0.75rem 1rem',
    borderLeftWidth: '4px',
    borderLeftStyle: 'solid',
    borderRadius: '0.375rem',
  },
  info: {
    backgroundColor: alertTokens.info,
    borderLeftColor: alertTokens.infoBorder,
    color: alertTokens.infoText,
  },
  success: {
    backgroundColor: alertTokens.success,
    borderLeftColor: alertTokens.successBorder,
    color: alertTokens.successText,
  },
  warning: {
    backgroundColor: alertTokens.warning,
    borderLeftColor: alertTokens.warningBorder,
    color: alertTokens.warningText,
  },
  error: {
    backgroundColor: alertTokens.error,
    borderLeftColor: alertTokens.errorBorder,
    color: alertTokens.errorText,
  },
  content: {
    flex: '1',
  },
  title: {
    margin: '0 0 0.25rem',
    fontSize: '1rem',
    fontWeight: '700',
  },
  message: {
    margin: '0',
  },
  dismiss: {
    padding: '0.25rem 0.5rem',
    border: 'none',
    background: 'none',
    fontSize: '1.25rem',
    lineHeight: '1',
    cursor: 'pointer',
  },
})
