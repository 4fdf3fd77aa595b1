import { createTokens } from 'plaited'

export const accordionTokens = createTokens('accordion', {
  heading: { $value: '#111827' },
  body: { $value: '#374151' },
  border: { $value: '#d1d5db' },
  surface: { $value: '#ffffff' },
  hover: { $value: '#f9fafb' },
  disabled: { $value: '#6b7280' },
})
