import { createStyles } from 'plaited'
import { checkboxTokens } from './checkbox.tokens.ts'

export const styles = createStyles({
  field: {
    display: 'flex',
    flexDirection: 'column',
    gap: '0.25rem',
  },
  label: {
    display: 'inline-flex',
    alignItems: 'center',
    gap: '0.5rem',
    color: checkboxTokens.text,
    fontSize: '1rem',
    cursor: 'pointer',
  },
  input: {
    width: '1.125rem',
    height: '1.125rem',
    accentColor: checkboxTokens.accent,
  },
  disabled: {
    color: checkboxTokens.disabled,
    cursor: 'not-allowed',
  },
  invalid: {
    outlineWidth: '2px',
    outlineStyle: 'solid',
    outlineColor: checkboxTokens.error,
  },
  error: {
    margin: '0',
    fontSize: '0.875rem',
    color: checkboxTokens.error,
  },
  mixedBox: {
    display: 'inline-flex',
    alignItems: 'center',
    gap: '0.5rem',
    padding: '0',
    border: 'none',
    background: 'none',
    color: checkboxTokens.text,
    fontSize: '1rem',
    cursor: 'pointer',
  },
  mixedMark: {
    display: 'inline-block',
    width: '1.125rem',
    height: '1.125rem',
    borderRadius: '0.25rem',
    backgroundColor: checkboxTokens.accent,
    color: checkboxTokens.surface,
    textAlign: 'center',
    lineHeight: '1.125rem',
  },
  group: {
    margin: '0',
    padding: '0.75rem',
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: checkboxTokens.border,
    borderRadius: '0.5rem',
  },
  list: {
    listStyle: 'none',
    margin: '0.5rem 0 0',
    padding: '0 0 0 1.5rem',
  },
})
