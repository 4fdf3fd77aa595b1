import { createStyles } from 'plaited'
import { textareaTokens } from './textarea.tokens.ts'

export const styles = createStyles({
  field: {
    display: 'flex',
    flexDirection: 'column',
    gap: '0.375rem',
    maxWidth: '32rem',
  },
  label: {
    fontWeight: '600',
    color: textareaTokens.label,
  },
  textarea: {
    minHeight: '6rem',
    padding: '0.5rem 0.75rem',
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: textareaTokens.border,
    borderRadius: '0.375rem',
    backgroundColor: textareaTokens.surface,
    color: textareaTokens.label,
    fontFamily: 'inherit',
    fontSize: '1rem',
    resize: 'vertical',
  },
  invalid: {
    borderColor: textareaTokens.error,
  },
  disabled: {
    backgroundColor: textareaTokens.disabledSurface,
    cursor: 'not-allowed',
  },
  meta: {
    display: 'flex',
    justifyContent: 'space-between',
    gap: '1rem',
  },
  hint: {
    margin: '0',
    fontSize: '0.875rem',
    color: textareaTokens.hint,
  },
  error: {
    margin: '0',
    fontSize: '0.875rem',
    color: textareaTokens.error,
  },
})
