import { createTokens } from 'plaited'

export const badgeTokens = createTokens('badge', {
  neutral: { $value: '#e5e7eb' },
  neutralText: { $value: '#1f2937' },
  success: { $value: '#dcfce7' },
  successText: { $value: '#14532d' },
  warning: { $value: '#fef3c7' },
  warningText: { $value: '#78350f' },
  danger: { $value: '#fee2e2' },
  dangerText: { $value: '#7f1d1d' },
  info: { $value: '#dbeafe' },
  infoText: { $value: '#1e3a8a' },
  count: { $value: '#b91c1c' },
  countText: { $value: '#ffffff' },
  heading: { $value: '#111827' },
})
