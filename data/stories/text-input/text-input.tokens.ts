import { createTokens } from 'plaited'

export const textInputTokens = createTokens('text-input', {
  label: { $value: '#111827' },
  hint: { $value: '#4b5563' },
  border: { $value: '#6b7280' },
  focus: { $value: '#2563eb' },
  error: { $value: '#b91c1c' },
  surface: { $value: '#ffffff' },
  disabledSurface: { $value: '#f3f4f6' },
  disabledText: { $value: '#4b5563' },
})
