import { createTokens } from 'plaited'

export const switchTokens = createTokens('switch', {
  trackOff: { $value: '#6b7280' },
  trackOn: { $value: '#15803d' },
  thumb: { $value: '#ffffff' },
  label: { $value: '#111827' },
  hint: { $value: '#4b5563' },
  disabled: { $value: '#d1d5db' },
  divider: { $value: '#e5e7eb' },
})
