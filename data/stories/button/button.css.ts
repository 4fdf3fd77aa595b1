import { createStyles } from 'plaited'
import { buttonTokens } from './button.tokens.ts'

export const styles = createStyles({
  button: {
    display: 'inline-flex',
    alignItems: 'center',
    gap: '0.5rem',
    padding: '0.5rem 1rem',
    borderRadius: '0.375rem',
    border: 'none',
    fontSize: '1rem',
    cursor: 'pointer',
  },
  primary: {
    backgroundColor: buttonTokens.primary,
    color: buttonTokens.primaryText,
  },
  secondary: {
    backgroundColor: buttonTokens.secondary,
    color: buttonTokens.secondaryText,
  },
  disabled: {
    backgroundColor: buttonTokens.disabled,
    cursor: 'not-allowed',
  },
  spinner: {
    width: '1rem',
    height: '1rem',
    borderRadius: '50%',
  },
})
