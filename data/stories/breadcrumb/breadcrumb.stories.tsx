import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './breadcrumb.css.ts'

export const meta = {
  title: 'Breadcrumb',
  intent: 'Create a two-level breadcrumb from "Home" to the current "Contact" page',
}

type Crumb = { label: string; href: string }

const BreadcrumbItem: FT<{ crumb: Crumb; current?: boolean }> = ({ crumb, current = false }) => (
  <li {...styles.item}>
    <a
      href={crumb.href}
      aria-current={current ? 'page' : undefined}
      {...joinStyles(styles.link, current && styles.current)}
    >
      {crumb.label}
    </a>
    {!current && (
      <span aria-hidden='true' {...styles.separator}>
        /
      </span>
    )}
  </li>
)

const Breadcrumb: FT<{ label?: string; items?: Crumb[] }> = ({ label = 'Breadcrumb', items = [], ...rest }) => (
  <nav aria-label={label} {...rest}>
    <ol {...styles.list}>
      {items.map((item, index) => (
        <BreadcrumbItem crumb={item} current={index === items.length - 1} />
      ))}
    </ol>
  </nav>
)

export const contactBreadcrumb = story({
  template: Breadcrumb,
  args: {
    items: [
      { label: 'Home', href: '/' },
      { label: 'Contact', href: '/contact' },
    ],
  },
})

export const productBreadcrumb = story({
  intent: 'Create a breadcrumb trail Home > Shop > Headphones where "Headphones" is the current page',
  template: Breadcrumb,
  args: {
    items: [
      { label: 'Home', href: '/' },
      { label: 'Shop', href: '/shop' },
      { label: 'Headphones', href: '/shop/headphones' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'a breadcrumb', should: 'mark the last item as current', actual: current?.textContent, expected: 'Headphones' })
  },
})

export const deepDocsBreadcrumb = story({
  intent: 'Create a five-level documentation breadcrumb ending at the current "Rate limits" page',
  template: Breadcrumb,
  args: {
    items: [
      { label: 'Docs', href: '/docs' },
      { label: 'API', href: '/docs/api' },
      { label: 'Reference', href: '/docs/api/reference' },
      { label: 'Usage', href: '/docs/api/reference/usage' },
      { label: 'Rate limits', href: '/docs/api/reference/usage/rate-limits' },
    ],
  },
})

export const accountBreadcrumbCustomLabel = story({
  intent: 'Create an account area breadcrumb navigation labelled "You are here" ending at "Security settings"',
  template: Breadcrumb,
  args: {
    label: 'You are here',
    items: [
      { label: 'Account', href: '/account' },
      { label: 'Settings', href: '/account/settings' },
      { label: 'Security settings', href: '/account/settings/security' },
    ],
  },
})

export const recipeCategoryTrail = story({
  intent: 'Give a lemon tart recipe page a navigation trail Recipes / Desserts / Lemon tart, marking the tart as the page being viewed',
  template: Breadcrumb,
  args: {
    items: [
      { label: 'Recipes', href: '/recipes' },
      { label: 'Desserts', href: '/recipes/desserts' },
      { label: 'Lemon tart', href: '/recipes/desserts/lemon-tart' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'the recipe page', should: 'be the current link', actual: current?.textContent, expected: 'Lemon tart' })
  },
})

export const helpCenterTrailNamed = story({
  intent: 'Add a help center trail named "Help center location": Help / Account / Sign-in problems / Reset your password, ending on the last',
  template: Breadcrumb,
  args: {
    label: 'Help center location',
    items: [
      { label: 'Help', href: '/help' },
      { label: 'Account', href: '/help/account' },
      { label: 'Sign-in problems', href: '/help/account/sign-in' },
      { label: 'Reset your password', href: '/help/account/sign-in/reset-password' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const nav = await findByAttribute('aria-label', 'Help center location')
    assert({ given: 'four levels', should: 'list four links', actual: nav?.querySelectorAll('a').length, expected: 4 })
  },
})

export const dashboardOnlyCrumb = story({
  intent: 'A trail on the top-level Dashboard screen that holds just one entry, "Dashboard", which is the current page',
  template: Breadcrumb,
  args: { items: [{ label: 'Dashboard', href: '/dashboard' }] },
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'a single entry', should: 'mark it current', actual: current?.textContent, expected: 'Dashboard' })
  },
})
