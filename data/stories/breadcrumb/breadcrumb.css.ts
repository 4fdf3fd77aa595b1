import { createStyles } from 'plaited'
import { breadcrumbTokens } from './breadcrumb.tokens.ts'

export const styles = createStyles({
  list: {
    display: 'flex',
    flexWrap: 'wrap',
    alignItems: 'center',
    gap: '0.5rem',
    listStyle: 'none',
    margin: '0',
    padding: '0',
    fontSize: '0.875rem',
  },
  item: {
    display: 'inline-flex',
    alignItems: 'center',
    gap: '0.5rem',
  },
  link: {
    color: breadcrumbTokens.link,
    textDecoration: 'underline',
  },
  current: {
    color: breadcrumbTokens.current,
    fontWeight: '600',
    textDecoration: 'none',
  },
  separator: {
    color: breadcrumbTokens.separator,
  },
})
