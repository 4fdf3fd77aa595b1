import { createTokens } from 'plaited'

export const cardTokens = createTokens('card', {
  surface: { $value: '#ffffff' },
  border: { $value: '#e5e7eb' },
  heading: { $value: '#111827' },
  body: { $value: '#374151' },
  muted: { $value: '#4b5563' },
  action: { $value: '#1d4ed8' },
  actionText: { $value: '#ffffff' },
  link: { $value: '#1d4ed8' },
  skeleton: { $value: '#e5e7eb' },
  disabled: { $value: '#9ca3af' },
})
