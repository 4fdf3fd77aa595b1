import { createStyles } from 'plaited'
import { toggleButtonTokens } from './toggle-button.tokens.ts'

export const styles = createStyles({
  toggle: {
    display: 'inline-flex',
    alignItems: 'center',
    gap: '0.375rem',
    padding: '0.375rem 0.75rem',
    borderRadius: '0.375rem',
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: toggleButtonTokens.border,
    backgroundColor: toggleButtonTokens.surface,
    color: toggleButtonTokens.text,
    fontSize: '0.875rem',
    cursor: 'pointer',
  },
  pressed: {
    backgroundColor: toggleButtonTokens.pressed,
    borderColor: toggleButtonTokens.pressed,
    color: toggleButtonTokens.pressedText,
  },
  disabled: {
    backgroundColor: toggleButtonTokens.disabled,
    color: toggleButtonTokens.disabledText,
    cursor: 'not-allowed',
  },
  toolbar: {
    display: 'inline-flex',
    gap: '0.25rem',
    padding: '0.25rem',
    borderRadius: '0.5rem',
    backgroundColor: toggleButtonTokens.toolbar,
  },
})
