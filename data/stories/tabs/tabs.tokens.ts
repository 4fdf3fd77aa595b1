import { createTokens } from 'plaited'

export const tabsTokens = createTokens('tabs', {
  text: { $value: '#374151' },
  active: { $value: '#1d4ed8' },
  activeText: { $value: '#1e3a8a' },
  border: { $value: '#e5e7eb' },
  disabled: { $value: '#6b7280' },
  panel: { $value: '#ffffff' },
})
