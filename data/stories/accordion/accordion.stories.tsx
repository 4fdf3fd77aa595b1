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
