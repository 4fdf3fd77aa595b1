import { createTokens } from 'plaited'

export const dialogTokens = createTokens('dialog', {
  backdrop: { $value: '#111827' },
  surface: { $value: '#ffffff' },
  heading: { $value: '#111827' },
  body: { $value: '#374151' },
  border: { $value: '#d1d5db' },
  primary: { $value: '#1d4ed8' },
  primaryText: { $value: '#ffffff' },
  danger: { $value: '#b91c1c' },
  dangerText: { $value: '#ffffff' },
  secondary: { $value: '#e5e7eb' },
  secondaryText: { $value: '#111827' },
})
