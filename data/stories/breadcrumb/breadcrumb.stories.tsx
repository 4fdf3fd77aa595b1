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

export const courseLessonCrumbs = story({
  intent: 'Compose a "Course path" breadcrumb by hand from two items, "Biology 101" linking to the course and the current "Lesson 3: Cells"',
  template: () => (
    <nav aria-label='Course path'>
      <ol {...styles.list}>
        <BreadcrumbItem crumb={{ label: 'Biology 101', href: '/courses/biology-101' }} />
        <BreadcrumbItem crumb={{ label: 'Lesson 3: Cells', href: '/courses/biology-101/lesson-3' }} current={true} />
      </ol>
    </nav>
  ),
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'a lesson page', should: 'mark the lesson as current', actual: current?.textContent, expected: 'Lesson 3: Cells' })
  },
})

export const flightSearchBreadcrumb = story({
  intent: 'Build a two-step breadcrumb for a travel site going from "Flights" to the current "Lisbon to Tokyo" results',
  template: Breadcrumb,
  args: {
    items: [
      { label: 'Flights', href: '/flights' },
      { label: 'Lisbon to Tokyo', href: '/flights/lisbon-tokyo' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const nav = await findByAttribute('aria-label', 'Breadcrumb')
    assert({ given: 'two steps', should: 'render two links', actual: nav?.querySelectorAll('a').length, expected: 2 })
  },
})

export const warehouseBinBreadcrumb = story({
  intent: 'A six-level warehouse location breadcrumb: Warehouses, Berlin, Zone C, Aisle 12, Shelf 4 and the current "Bin 7"',
  template: Breadcrumb,
  args: {
    items: [
      { label: 'Warehouses', href: '/warehouses' },
      { label: 'Berlin', href: '/warehouses/berlin' },
      { label: 'Zone C', href: '/warehouses/berlin/zone-c' },
      { label: 'Aisle 12', href: '/warehouses/berlin/zone-c/aisle-12' },
      { label: 'Shelf 4', href: '/warehouses/berlin/zone-c/aisle-12/shelf-4' },
      { label: 'Bin 7', href: '/warehouses/berlin/zone-c/aisle-12/shelf-4/bin-7' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'six levels', should: 'mark the deepest one current', actual: current?.textContent, expected: 'Bin 7' })
  },
})

export const bankingStatementBreadcrumb = story({
  intent: 'Create an online banking breadcrumb whose navigation is named "Banking sections", from "Accounts" through "Savings" to the current "March statement"',
  template: Breadcrumb,
  args: {
    label: 'Banking sections',
    items: [
      { label: 'Accounts', href: '/accounts' },
      { label: 'Savings', href: '/accounts/savings' },
      { label: 'March statement', href: '/accounts/savings/statements/march' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const nav = await findByAttribute('aria-label', 'Banking sections')
    assert({ given: 'a custom name', should: 'label the navigation', actual: nav?.tagName, expected: 'NAV' })
  },
})

export const musicAlbumBreadcrumb = story({
  intent: 'Show where the listener is in a music library: "Library", then "Artists", then "Nina Simone", with the album "Pastel Blues" as the page open now',
  template: Breadcrumb,
  args: {
    items: [
      { label: 'Library', href: '/library' },
      { label: 'Artists', href: '/library/artists' },
      { label: 'Nina Simone', href: '/library/artists/nina-simone' },
      { label: 'Pastel Blues', href: '/library/artists/nina-simone/pastel-blues' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'an album page', should: 'mark the album current', actual: current?.textContent, expected: 'Pastel Blues' })
  },
})
