import { createTokens } from 'plaited'

export const progressBarTokens = createTokens('progress-bar', {
  track: { $value: '#e5e7eb' },
  fill: { $value: '#1d4ed8' },
  complete: { $value: '#15803d' },
  error: { $value: '#b91c1c' },
  label: { $value: '#111827' },
  hint: { $value: '#4b5563' },
})
