import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './tabs.css.ts'

export const meta = {
  title: 'Tabs',
  description: 'Tab lists with tabs that control labelled tab panels',
}

type TabItem = { id: string; label: string; content: string; disabled?: boolean }

const Tab: FT<{ baseId: string; tab: TabItem; selected: boolean }> = ({ baseId, tab, selected }) => (
  <button
    type='button'
    role='tab'
    id={`${baseId}-tab-${tab.id}`}
    aria-selected={selected}
    aria-controls={`${baseId}-panel-${tab.id}`}
    aria-disabled={tab.disabled ? 'true' : undefined}
    tabIndex={selected ? 0 : -1}
    p-trigger={{ click: 'selectTab' }}
    {...joinStyles(styles.tab, selected && styles.selected, tab.disabled && styles.disabled)}
  >
    {tab.label}
  </button>
)

const TabPanel: FT<{ baseId: string; tab: TabItem; selected: boolean }> = ({ baseId, tab, selected }) => (
  <section
    role='tabpanel'
    id={`${baseId}-panel-${tab.id}`}
    aria-labelledby={`${baseId}-tab-${tab.id}`}
    tabIndex={0}
    hidden={!selected}
    {...styles.panel}
  >
    <p>{tab.content}</p>
  </section>
)

const Tabs: FT<{
  id: string
  label: string
  tabs?: TabItem[]
  selected?: string
  orientation?: 'horizontal' | 'vertical'
}> = ({ id, label, tabs = [], selected, orientation = 'horizontal' }) => {
  const active = selected ?? tabs[0]?.id
  const vertical = orientation === 'vertical'
  return (
    <div {...joinStyles(styles.tabs, vertical && styles.vertical)}>
      <div
        role='tablist'
        aria-label={label}
        aria-orientation={vertical ? 'vertical' : undefined}
        {...joinStyles(styles.tablist, vertical && styles.tablistVertical)}
      >
        {tabs.map((tab) => (
          <Tab baseId={id} tab={tab} selected={tab.id === active} />
        ))}
      </div>
      {tabs.map((tab) => (
        <TabPanel baseId={id} tab={tab} selected={tab.id === active} />
      ))}
    </div>
  )
}

export const accountSettingsTabs = story({
  intent: 'Create account settings tabs for Profile, Security and Billing with the Profile tab selected',
  template: Tabs,
  args: {
    id: 'account',
    label: 'Account settings',
    tabs: [
      { id: 'profile', label: 'Profile', content: 'Update your name, photo and bio.' },
      { id: 'security', label: 'Security', content: 'Change your password and manage two-factor authentication.' },
      { id: 'billing', label: 'Billing', content: 'Review invoices and update your payment method.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const tab = await findByAttribute('id', 'account-tab-profile')
    assert({ given: 'the first tab', should: 'be selected', actual: tab?.getAttribute('aria-selected'), expected: 'true' })
  },
})

export const pricingTabsAnnualSelected = story({
  intent: 'Create pricing tabs for Monthly and Annual billing where the Annual tab is selected',
  template: Tabs,
  args: {
    id: 'pricing',
    label: 'Billing period',
    selected: 'annual',
    tabs: [
      { id: 'monthly', label: 'Monthly', content: 'Pay 12 dollars every month, cancel anytime.' },
      { id: 'annual', label: 'Annual', content: 'Pay 120 dollars per year and get two months free.' },
    ],
  },
})

export const tabsWithDisabledTab = story({
  description: 'Create product detail tabs where the "Reviews" tab is disabled because there are no reviews yet',
  template: Tabs,
  args: {
    id: 'product',
    label: 'Product details',
    tabs: [
      { id: 'overview', label: 'Overview', content: 'A compact espresso machine for small kitchens.' },
      { id: 'specs', label: 'Specifications', content: '1.2 litre tank, 15 bar pump, 1350 watts.' },
      { id: 'reviews', label: 'Reviews', content: 'No reviews yet.', disabled: true },
    ],
  },
})

export const verticalDocsTabs = story({
  intent: 'Create vertical tabs for Installation, Configuration and Deployment documentation sections',
  template: Tabs,
  args: {
    id: 'docs',
    label: 'Documentation sections',
    orientation: 'vertical',
    selected: 'configuration',
    tabs: [
      { id: 'installation', label: 'Installation', content: 'Install the package with your package manager.' },
      { id: 'configuration', label: 'Configuration', content: 'Create a config file in the project root.' },
      { id: 'deployment', label: 'Deployment', content: 'Build the project and upload the output folder.' },
    ],
  },
})

export const recipeTabsNutritionActive = story({
  intent: 'Split a recipe into Ingredients, Method, Nutrition and Reviews views under the name "Recipe sections", showing Nutrition',
  template: Tabs,
  args: {
    id: 'recipe',
    label: 'Recipe sections',
    selected: 'nutrition',
    tabs: [
      { id: 'ingredients', label: 'Ingredients', content: 'Flour, butter, sugar, two lemons and four eggs.' },
      { id: 'method', label: 'Method', content: 'Blind bake the case, then fill and bake again.' },
      { id: 'nutrition', label: 'Nutrition', content: '320 kcal per slice.' },
      { id: 'reviews', label: 'Reviews', content: 'Rated 4.6 by 212 cooks.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const tab = await findByAttribute('id', 'recipe-tab-nutrition')
    const panel = await findByAttribute('id', 'recipe-panel-ingredients')
    assert({ given: 'the chosen view', should: 'be selected', actual: tab?.getAttribute('aria-selected'), expected: 'true' })
    assert({ given: 'another view', should: 'hide its panel', actual: panel?.hidden, expected: true })
  },
})

export const signInRegisterTabs = story({
  intent: 'An "Authentication" box switching between "Sign in" and "Register" forms, opened on Register',
  template: Tabs,
  args: {
    id: 'auth',
    label: 'Authentication',
    selected: 'register',
    tabs: [
      { id: 'sign-in', label: 'Sign in', content: 'Enter your email and password.' },
      { id: 'register', label: 'Register', content: 'Create an account in under a minute.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const tab = await findByAttribute('id', 'auth-tab-register')
    assert({ given: 'the register form', should: 'be selected', actual: tab?.getAttribute('aria-selected'), expected: 'true' })
  },
})

export const verticalAdminSectionsLocked = story({
  intent: 'A side menu of "Admin sections" stacked vertically (Users, Roles, Audit log) where Audit log is unavailable and Roles is open',
  template: Tabs,
  args: {
    id: 'admin',
    label: 'Admin sections',
    orientation: 'vertical',
    selected: 'roles',
    tabs: [
      { id: 'users', label: 'Users', content: 'Invite, suspend and remove people.' },
      { id: 'roles', label: 'Roles', content: 'Decide what each role may do.' },
      { id: 'audit', label: 'Audit log', content: 'Available on the Enterprise plan.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const list = await findByAttribute('role', 'tablist')
    const audit = await findByAttribute('id', 'admin-tab-audit')
    assert({ given: 'a vertical list', should: 'say so', actual: list?.getAttribute('aria-orientation'), expected: 'vertical' })
    assert({ given: 'an unavailable section', should: 'be aria-disabled', actual: audit?.getAttribute('aria-disabled'), expected: 'true' })
  },
})
