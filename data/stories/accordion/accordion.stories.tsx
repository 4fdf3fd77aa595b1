import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './accordion.css.ts'

export const meta = {
  title: 'Accordion',
  description: 'Disclosure sections whose buttons control labelled regions',
}

type Section = { id: string; title: string; body: string; disabled?: boolean }

const AccordionSection: FT<{ baseId: string; section: Section; expanded?: boolean }> = ({ baseId, section, expanded = false }) => (
  <>
    <h2 {...styles.heading}>
      <button
        type='button'
        id={`${baseId}-${section.id}-button`}
        aria-expanded={expanded}
        aria-controls={`${baseId}-${section.id}-panel`}
        disabled={section.disabled}
        p-trigger={{ click: 'toggle' }}
        {...joinStyles(styles.trigger, section.disabled && styles.disabled)}
      >
        {section.title}
        <span aria-hidden='true' {...joinStyles(styles.icon, expanded && styles.iconOpen)}>
          v
        </span>
      </button>
    </h2>
    <section
      id={`${baseId}-${section.id}-panel`}
      aria-labelledby={`${baseId}-${section.id}-button`}
      hidden={!expanded}
      {...styles.panel}
    >
      <p>{section.body}</p>
    </section>
  </>
)

const Accordion: FT<{ id: string; sections?: Section[]; open?: string[] }> = ({ id, sections = [], open = [] }) => (
  <div {...styles.accordion}>
    {sections.map((section) => (
      <AccordionSection baseId={id} section={section} expanded={open.includes(section.id)} />
    ))}
  </div>
)

const faq: Section[] = [
  { id: 'returns', title: 'What is your return policy?', body: 'You can return unused items within 30 days for a full refund.' },
  { id: 'shipping', title: 'How long does shipping take?', body: 'Orders ship within two business days and arrive in three to five.' },
  { id: 'warranty', title: 'Is there a warranty?', body: 'Every product includes a two-year limited warranty.' },
]

export const faqFirstOpen = story({
  intent: 'Create a shop FAQ accordion with three questions where only the return policy answer is expanded',
  template: Accordion,
  args: { id: 'faq', sections: faq, open: ['returns'] },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('id', 'faq-returns-button')
    assert({ given: 'the open section', should: 'be expanded', actual: button?.getAttribute('aria-expanded'), expected: 'true' })
  },
})

export const faqAllCollapsed = story({
  intent: 'Create a fully collapsed FAQ accordion where every answer panel is hidden',
  template: Accordion,
  args: { id: 'faq-collapsed', sections: faq },
})

export const multipleExpandedSettings = story({
  intent: 'Create a settings accordion with Notifications and Privacy sections both expanded at the same time',
  template: Accordion,
  args: {
    id: 'settings',
    open: ['notifications', 'privacy'],
    sections: [
      { id: 'notifications', title: 'Notifications', body: 'Choose which events send you an email.' },
      { id: 'privacy', title: 'Privacy', body: 'Control who can see your activity.' },
      { id: 'advanced', title: 'Advanced', body: 'Developer options and experimental features.' },
    ],
  },
})

export const lockedSectionAccordion = story({
  intent: 'Create a course syllabus accordion where the locked "Module 3" section has a disabled toggle button',
  template: Accordion,
  args: {
    id: 'syllabus',
    open: ['module-1'],
    sections: [
      { id: 'module-1', title: 'Module 1: Foundations', body: 'Variables, types and control flow.' },
      { id: 'module-2', title: 'Module 2: Functions', body: 'Parameters, closures and recursion.' },
      { id: 'module-3', title: 'Module 3: Projects (locked)', body: 'Unlocks after you finish Module 2.', disabled: true },
    ],
  },
})

export const recipeMethodLastStepOpen = story({
  intent: 'Build a recipe method as disclosure sections titled Prepare, Rise, Bake and Serve, where only the final "Serve" step is open',
  template: Accordion,
  args: {
    id: 'method',
    open: ['serve'],
    sections: [
      { id: 'prep', title: 'Prepare', body: 'Mix flour, water, yeast and salt, then knead for ten minutes.' },
      { id: 'rise', title: 'Rise', body: 'Cover the bowl and leave it somewhere warm for an hour.' },
      { id: 'bake', title: 'Bake', body: 'Bake at 230 degrees for twenty minutes until golden.' },
      { id: 'serve', title: 'Serve', body: 'Cool on a rack for fifteen minutes before slicing.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const serve = await findByAttribute('id', 'method-serve-button')
    const prep = await findByAttribute('id', 'method-prep-button')
    assert({ given: 'the last step', should: 'be expanded', actual: serve?.getAttribute('aria-expanded'), expected: 'true' })
    assert({ given: 'the first step', should: 'stay collapsed', actual: prep?.getAttribute('aria-expanded'), expected: 'false' })
  },
})

export const releaseNotesSingleSection = story({
  intent: 'Show one expandable section titled "Version 2.4 release notes" that starts out open',
  template: Accordion,
  args: {
    id: 'release',
    open: ['v2-4'],
    sections: [{ id: 'v2-4', title: 'Version 2.4 release notes', body: 'Adds offline mode and fixes the sync conflict dialog.' }],
  },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('aria-controls', 'release-v2-4-panel')
    assert({ given: 'the only section', should: 'be expanded', actual: button?.getAttribute('aria-expanded'), expected: 'true' })
  },
})

export const conferenceAgendaPastSessions = story({
  intent: 'Lay out a conference day agenda of Breakfast, Welcome talk, Keynote and Lunch where the first two, already over, cannot be toggled and Keynote is open',
  template: Accordion,
  args: {
    id: 'agenda',
    open: ['keynote'],
    sections: [
      { id: 'breakfast', title: 'Breakfast', body: 'Coffee and pastries in the main hall.', disabled: true },
      { id: 'welcome', title: 'Welcome talk', body: 'Opening words from the organisers.', disabled: true },
      { id: 'keynote', title: 'Keynote', body: 'The future of accessible design systems.' },
      { id: 'lunch', title: 'Lunch', body: 'Vegetarian and vegan options on the terrace.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const breakfast = await findByAttribute('id', 'agenda-breakfast-button')
    const keynote = await findByAttribute('id', 'agenda-keynote-button')
    assert({ given: 'a past session', should: 'be disabled', actual: breakfast?.disabled, expected: true })
    assert({ given: 'the keynote', should: 'be expanded', actual: keynote?.getAttribute('aria-expanded'), expected: 'true' })
  },
})

export const tomatoWateringDisclosureCollapsed = story({
  intent: 'A lone "Watering schedule" disclosure for a tomato plant care card that starts collapsed, its tips hidden until someone clicks it',
  template: AccordionSection,
  args: {
    baseId: 'tomato',
    section: { id: 'watering', title: 'Watering schedule', body: 'Water deeply twice a week and keep the soil evenly moist.' },
  },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('id', 'tomato-watering-button')
    const panel = await findByAttribute('id', 'tomato-watering-panel')
    assert({ given: 'a collapsed disclosure', should: 'report collapsed', actual: button?.getAttribute('aria-expanded'), expected: 'false' })
    assert({ given: 'a collapsed disclosure', should: 'hide its panel', actual: panel?.hidden, expected: true })
  },
})

export const refundStatusOpenButFrozen = story({
  intent: 'Render a single "Refund status" heading button for a bank transfer that is already expanded but greyed out while the refund is processing',
  template: AccordionSection,
  args: {
    baseId: 'refund',
    expanded: true,
    section: {
      id: 'status',
      title: 'Refund status',
      body: 'Your refund of 42.50 EUR is being processed and should arrive within three working days.',
      disabled: true,
    },
  },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('id', 'refund-status-button')
    assert({ given: 'a frozen open section', should: 'be expanded', actual: button?.getAttribute('aria-expanded'), expected: 'true' })
    assert({ given: 'a frozen open section', should: 'be disabled', actual: button?.disabled, expected: true })
  },
})

export const lisbonItineraryEveryDayOpen = story({
  intent: 'Build a Lisbon trip itinerary with "Day 1: Alfama", "Day 2: Belém" and "Day 3: Sintra" panels, every one of them expanded',
  template: Accordion,
  args: {
    id: 'itinerary',
    open: ['day-1', 'day-2', 'day-3'],
    sections: [
      { id: 'day-1', title: 'Day 1: Alfama', body: 'Walk the old quarter and ride tram 28 to the castle.' },
      { id: 'day-2', title: 'Day 2: Belém', body: 'Visit the monastery and try the custard tarts.' },
      { id: 'day-3', title: 'Day 3: Sintra', body: 'Take the morning train to the palaces in the hills.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const last = await findByAttribute('id', 'itinerary-day-3-button')
    assert({ given: 'every day open', should: 'expand the last day too', actual: last?.getAttribute('aria-expanded'), expected: 'true' })
  },
})

export const patientPortalBillingUnavailable = story({
  intent: 'Create a patient portal accordion where "Lab results" and "Prescriptions" are both showing their content and "Billing" is unavailable and cannot be opened',
  template: Accordion,
  args: {
    id: 'portal',
    open: ['lab-results', 'prescriptions'],
    sections: [
      { id: 'lab-results', title: 'Lab results', body: 'Your blood panel from 3 March is within normal ranges.' },
      { id: 'prescriptions', title: 'Prescriptions', body: 'Two active prescriptions, one refill ready for pickup.' },
      { id: 'billing', title: 'Billing', body: 'Billing is temporarily unavailable.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const billing = await findByAttribute('id', 'portal-billing-button')
    const prescriptions = await findByAttribute('id', 'portal-prescriptions-button')
    assert({ given: 'the billing section', should: 'be disabled', actual: billing?.disabled, expected: true })
    assert({ given: 'the prescriptions section', should: 'be expanded', actual: prescriptions?.getAttribute('aria-expanded'), expected: 'true' })
  },
})

export const shipmentTrackingCustomsPending = story({
  intent: 'A shipment tracking panel with "Picked up", "In transit" and "Customs clearance" steps, all closed, where the customs step is inactive until the parcel reaches the border',
  template: Accordion,
  args: {
    id: 'shipment',
    sections: [
      { id: 'picked-up', title: 'Picked up', body: 'Collected from the Rotterdam warehouse on Monday at 09:14.' },
      { id: 'in-transit', title: 'In transit', body: 'Travelling by truck towards the Polish border.' },
      { id: 'customs', title: 'Customs clearance', body: 'Customs details appear once the parcel reaches the border.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const customs = await findByAttribute('id', 'shipment-customs-button')
    const transit = await findByAttribute('id', 'shipment-in-transit-button')
    assert({ given: 'the pending customs step', should: 'be disabled', actual: customs?.disabled, expected: true })
    assert({ given: 'an enabled step', should: 'start collapsed', actual: transit?.getAttribute('aria-expanded'), expected: 'false' })
  },
})
