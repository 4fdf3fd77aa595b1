import { createTokens } from 'plaited'

export const selectTokens = createTokens('select', {
  label: { $value: '#111827' },
  hint: { $value: '#4b5563' },
  border: { $value: '#6b7280' },
  surface: { $value: '#ffffff' },
  error: { $value: '#b91c1c' },
  disabledSurface: { $value: '#f3f4f6' },
})
