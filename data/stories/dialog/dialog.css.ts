import { createStyles } from 'plaited'
import { dialogTokens } from './dialog.tokens.ts'

export const styles = createStyles({
  backdrop: {
    position: 'fixed',
    inset: '0',
    display: 'grid',
    placeItems: 'center',
    backgroundColor: dialogTokens.backdrop,
  },
  dialog: {
    display: 'flex',
    flexDirection: 'column',
    gap: '1rem',
    width: 'min(32rem, 90vw)',
    padding: '1.5rem',
    borderRadius: '0.75rem',
    backgroundColor: dialogTokens.surface,
    color: dialogTokens.body,
  },
  header: {
    display: 'flex',
    alignItems: 'center',
    justifyContent: 'space-between',
    gap: '1rem',
  },
  title: {
    margin: '0',
    fontSize: '1.25rem',
    color: dialogTokens.heading,
  },
  body: {
    margin: '0',
    lineHeight: '1.5',
  },
  close: {
    padding: '0.25rem 0.5rem',
    border: 'none',
    background: 'none',
    fontSize: '1.5rem',
    lineHeight: '1',
    cursor: 'pointer',
  },
  footer: {
    display: 'flex',
    justifyContent: 'flex-end',
    gap: '0.5rem',
  },
  button: {
    padding: '0.5rem 1rem',
    border: 'none',
    borderRadius: '0.375rem',
    cursor: 'pointer',
  },
  primary: {
    backgroundColor: dialogTokens.primary,
    color: dialogTokens.primaryText,
  },
  danger: {
    backgroundColor: dialogTokens.danger,
    color: dialogTokens.dangerText,
  },
  secondary: {
    backgroundColor: dialogTokens.secondary,
    color: dialogTokens.secondaryText,
  },
  field: {
    display: 'flex',
    flexDirection: 'column',
    gap: '0.375rem',
  },
  input: {
    padding: '0.5rem 0.75rem',
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: dialogTokens.border,
    borderRadius: '0.375rem',
  },
})
