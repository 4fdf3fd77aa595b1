import { createStyles } from 'plaited'
import { radioGroupTokens } from './radio-group.tokens.ts'

export const styles = createStyles({
  fieldset: {
    display: 'flex',
    flexDirection: 'column',
    gap: '0.5rem',
    margin: '0',
    padding: '1rem',
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: radioGroupTokens.border,
    borderRadius: '0.5rem',
  },
  invalid: {
    borderColor: radioGroupTokens.error,
  },
  horizontal: {
    flexDirection: 'row',
    flexWrap: 'wrap',
    gap: '1rem',
  },
  legend: {
    padding: '0 0.25rem',
    fontWeight: '600',
    color: radioGroupTokens.text,
  },
  option: {
    display: 'inline-flex',
    alignItems: 'center',
    gap: '0.5rem',
    color: radioGroupTokens.text,
    cursor: 'pointer',
  },
  optionDisabled: {
    color: radioGroupTokens.disabled,
    cursor: 'not-allowed',
  },
  radio: {
    accentColor: radioGroupTokens.accent,
  },
  hint: {
    fontSize: '0.875rem',
    color: radioGroupTokens.hint,
  },
  error: {
    margin: '0',
    fontSize: '0.875rem',
    color: radioGroupTokens.error,
  },
})
