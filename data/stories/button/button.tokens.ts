import { createTokens } from 'plaited'

export const buttonTokens = createTokens('button', {
  primary: { $value: '#1d4ed8' },
  primaryText: { $value: '#ffffff' },
  secondary: { $value: '#e5e7eb' },
  secondaryText: { $value: '#111827' },
  focusRing: { $value: '#f59e0b' },
  disabled: { $value: '#9ca3af' },
})
