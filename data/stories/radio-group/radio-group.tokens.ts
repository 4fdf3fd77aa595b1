import { createTokens } from 'plaited'

export const radioGroupTokens = createTokens('radio-group', {
  text: { $value: '#111827' },
  hint: { $value: '#4b5563' },
  accent: { $value: '#7c3aed' },
  border: { $value: '#d1d5db' },
  error: { $value: '#b91c1c' },
  disabled: { $value: '#6b7280' },
})
