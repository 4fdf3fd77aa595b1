import { createTokens } from 'plaited'

export const breadcrumbTokens = createTokens('breadcrumb', {
  link: { $value: '#1d4ed8' },
  current: { $value: '#111827' },
  separator: { $value: '#6b7280' },
})
