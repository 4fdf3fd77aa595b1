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
  description: 'Create "Product details" tabs Overview, Specifications and Reviews, with Overview open and the "Reviews" tab disabled because there are no reviews yet',
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

export const tripDetailsHotelOpen = story({
  intent: 'Create "Trip details" tabs for Flights, Hotel and Car hire that open on the Hotel tab',
  template: Tabs,
  args: {
    id: 'trip',
    label: 'Trip details',
    selected: 'hotel',
    tabs: [
      { id: 'flights', label: 'Flights', content: 'Outbound 08:40 from Dublin, return 19:15 from Rome.' },
      { id: 'hotel', label: 'Hotel', content: 'Four nights at a guesthouse near the Pantheon, breakfast included.' },
      { id: 'car', label: 'Car hire', content: 'No car booked for this trip.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const hotel = await findByAttribute('id', 'trip-tab-hotel')
    const flightsPanel = await findByAttribute('id', 'trip-panel-flights')
    assert({ given: 'the hotel tab opened first', should: 'be selected', actual: hotel?.getAttribute('aria-selected'), expected: 'true' })
    assert({ given: 'the flights tab', should: 'hide its panel', actual: flightsPanel?.hidden, expected: true })
  },
})

export const courseGradesNotYetAvailable = story({
  intent: 'A "Course overview" tab strip with Syllabus, Assignments and Grades, starting on Syllabus, where Grades cannot be opened until the term ends',
  template: Tabs,
  args: {
    id: 'course',
    label: 'Course overview',
    tabs: [
      { id: 'syllabus', label: 'Syllabus', content: 'Twelve weeks on cell biology, with a lab every Thursday.' },
      { id: 'assignments', label: 'Assignments', content: 'Lab report one is due on 3 October.' },
      { id: 'grades', label: 'Grades', content: 'Grades are published after the final exam.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const syllabus = await findByAttribute('id', 'course-tab-syllabus')
    const grades = await findByAttribute('id', 'course-tab-grades')
    assert({ given: 'no tab chosen', should: 'select the first tab', actual: syllabus?.getAttribute('aria-selected'), expected: 'true' })
    assert({ given: 'grades not yet released', should: 'be aria-disabled', actual: grades?.getAttribute('aria-disabled'), expected: 'true' })
  },
})

export const musicLibraryVerticalPodcasts = story({
  intent: 'Build a vertical "Music library" tab list of Albums, Artists, Playlists and Podcasts with the last one, Podcasts, selected',
  template: Tabs,
  args: {
    id: 'library',
    label: 'Music library',
    orientation: 'vertical',
    selected: 'podcasts',
    tabs: [
      { id: 'albums', label: 'Albums', content: '184 albums saved.' },
      { id: 'artists', label: 'Artists', content: 'You follow 42 artists.' },
      { id: 'playlists', label: 'Playlists', content: 'Road trip, Focus and Sunday morning.' },
      { id: 'podcasts', label: 'Podcasts', content: 'Three new episodes since your last visit.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const list = await findByAttribute('role', 'tablist')
    const podcasts = await findByAttribute('id', 'library-tab-podcasts')
    assert({ given: 'a vertical tab list', should: 'expose its orientation', actual: list?.getAttribute('aria-orientation'), expected: 'vertical' })
    assert({ given: 'the podcasts tab', should: 'be selected', actual: podcasts?.getAttribute('aria-selected'), expected: 'true' })
  },
})

export const bankActivityPostedDisputesOff = story({
  intent: 'Show bank "Account activity" split into Pending, Posted, Scheduled and Disputes tabs, opened on Posted, with the Disputes tab greyed out for this savings account',
  template: Tabs,
  args: {
    id: 'activity',
    label: 'Account activity',
    selected: 'posted',
    tabs: [
      { id: 'pending', label: 'Pending', content: 'Two card payments are waiting to clear.' },
      { id: 'posted', label: 'Posted', content: 'Salary received and rent paid this month.' },
      { id: 'scheduled', label: 'Scheduled', content: 'A transfer to your ISA runs on the 1st.' },
      { id: 'disputes', label: 'Disputes', content: 'Disputes are handled for current accounts only.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const posted = await findByAttribute('id', 'activity-tab-posted')
    const disputes = await findByAttribute('id', 'activity-tab-disputes')
    assert({ given: 'posted transactions opened', should: 'be selected', actual: posted?.getAttribute('aria-selected'), expected: 'true' })
    assert({ given: 'disputes unavailable', should: 'be aria-disabled', actual: disputes?.getAttribute('aria-disabled'), expected: 'true' })
  },
})

export const plantCareVerticalPruningOff = story({
  intent: 'A "Plant care" guide with Watering, Pruning and Repotting tabs stacked top to bottom, showing Watering, and Pruning disabled while out of season',
  template: Tabs,
  args: {
    id: 'plant-care',
    label: 'Plant care',
    orientation: 'vertical',
    selected: 'watering',
    tabs: [
      { id: 'watering', label: 'Watering', content: 'Soak the soil weekly and let it dry between waterings.' },
      { id: 'pruning', label: 'Pruning', content: 'Prune in late winter, before new growth starts.', disabled: true },
      { id: 'repotting', label: 'Repotting', content: 'Move to a pot one size larger every two years.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const watering = await findByAttribute('id', 'plant-care-panel-watering')
    const pruning = await findByAttribute('id', 'plant-care-tab-pruning')
    assert({ given: 'the watering tab shown', should: 'show its panel', actual: watering?.hidden, expected: false })
    assert({ given: 'pruning out of season', should: 'be aria-disabled', actual: pruning?.getAttribute('aria-disabled'), expected: 'true' })
  },
})
