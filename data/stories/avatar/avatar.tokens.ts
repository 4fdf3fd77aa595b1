import { createTokens } from 'plaited'

export const avatarTokens = createTokens('avatar', {
  fallback: { $value: '#4338ca' },
  fallbackText: { $value: '#ffffff' },
  ring: { $value: '#ffffff' },
  online: { $value: '#15803d' },
  away: { $value: '#b45309' },
  name: { $value: '#111827' },
})
