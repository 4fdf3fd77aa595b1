import { createStyles } from 'plaited'
import { selectTokens } from './select.tokens.ts'

export const styles = createStyles({
  field: {
    display: 'flex',
    flexDirection: 'column',
    gap: '0.375rem',
    maxWidth: '20rem',
  },
  label: {
    fontWeight: '600',
    color: selectTokens.label,
  },
  select: {
    padding: '0.5rem 0.75rem',
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: selectTokens.border,
    borderRadius: '0.375rem',
    backgroundColor: selectTokens.surface,
    color: selectTokens.label,
    fontSize: '1rem',
  },
  invalid: {
    borderColor: selectTokens.error,
  },
  disabled: {
    backgroundColor: selectTokens.disabledSurface,
    cursor: 'not-allowed',
  },
  hint: {
    margin: '0',
    fontSize: '0.875rem',
    color: selectTokens.hint,
  },
  error: {
    margin: '0',
    fontSize: '0.875rem',
    color: selectTokens.error,
  },
})
