import { createStyles } from 'plaited'
import { textInputTokens } from './text-input.tokens.ts'

export const styles = createStyles({
  field: {
    display: 'flex',
    flexDirection: 'column',
    gap: '0.375rem',
    maxWidth: '24rem',
  },
  label: {
    fontWeight: '600',
    color: textInputTokens.label,
  },
  input: {
    padding: '0.5rem 0.75rem',
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: textInputTokens.border,
    borderRadius: '0.375rem',
    backgroundColor: textInputTokens.surface,
    color: textInputTokens.label,
    fontSize: '1rem',
    outlineColor: textInputTokens.focus,
  },
  invalid: {
    borderColor: textInputTokens.error,
    outlineColor: textInputTokens.error,
  },
  disabled: {
    backgroundColor: textInputTokens.disabledSurface,
    color: textInputTokens.disabledText,
    cursor: 'not-allowed',
  },
  hint: {
    margin: '0',
    fontSize: '0.875rem',
    color: textInputTokens.hint,
  },
  error: {
    margin: '0',
    fontSize: '0.875rem',
    color: textInputTokens.error,
  },
  visuallyHidden: {
    position: 'absolute',
    width: '1px',
    height: '1px',
    overflow: 'hidden',
    clip: 'rect(0 0 0 0)',
    whiteSpace: 'nowrap',
  },
  search: {
    display: 'flex',
    gap: '0.5rem',
  },
})
