import { createTokens } from 'plaited'

export const checkboxTokens = createTokens('checkbox', {
  text: { $value: '#111827' },
  hint: { $value: '#4b5563' },
  accent: { $value: '#1d4ed8' },
  border: { $value: '#6b7280' },
  error: { $value: '#b91c1c' },
  disabled: { $value: '#6b7280' },
  surface: { $value: '#ffffff' },
})
