import { createTokens } from 'plaited'

export const alertTokens = createTokens('alert', {
  info: { $value: '#eff6ff' },
  infoBorder: { $value: '#1d4ed8' },
  infoText: { $value: '#1e3a8a' },
  success: { $value: '#f0fdf4' },
  successBorder: { $value: '#15803d' },
  successText: { $value: '#14532d' },
  warning: { $value: '#fffbeb' },
  warningBorder: { $value: '#b45309' },
  warningText: { $value: '#78350f' },
  error: { $value: '#fef2f2' },
  errorBorder: { $value: '#b91c1c' },
  errorText: { $value: '#7f1d1d' },
})
