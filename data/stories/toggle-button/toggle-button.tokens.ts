import { createTokens } from 'plaited'

export const toggleButtonTokens = createTokens('toggle-button', {
  surface: { $value: '#ffffff' },
  text: { $value: '#1f2937' },
  border: { $value: '#9ca3af' },
  pressed: { $value: '#1e3a8a' },
  pressedText: { $value: '#ffffff' },
  disabled: { $value: '#e5e7eb' },
  disabledText: { $value: '#4b5563' },
  toolbar: { $value: '#f3f4f6' },
})
