import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './toggle-button.css.ts'

export const meta = {
  title: 'Toggle button',
  description: 'Two-state buttons that expose their state with aria-pressed',
}

const ToggleButton: FT<{
  pressed?: boolean
  disabled?: boolean
}> = ({ pressed = false, disabled = false, children, ...rest }) => (
  <button
    type='button'
    aria-pressed={pressed}
    disabled={disabled}
    p-trigger={{ click: 'toggle' }}
    {...joinStyles(styles.toggle, pressed && styles.pressed, disabled && styles.disabled)}
    {...rest}
  >
    {children}
  </button>
)

const FormattingToolbar: FT<{
  label?: string
  tools?: { id: string; name: string; pressed: boolean }[]
}> = ({ label = 'Text formatting', tools = [] }) => (
  <div role='toolbar' aria-label={label} {...styles.toolbar}>
    {tools.map((tool) => (
      <ToggleButton pressed={tool.pressed} data-tool={tool.id}>
        {tool.name}
      </ToggleButton>
    ))}
  </div>
)

export const pressedBoldToggle = story({
  intent: 'Create a "Bold" toggle button that is currently pressed',
  template: ToggleButton,
  args: { pressed: true, children: 'Bold' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Bold')
    assert({ given: 'a pressed toggle', should: 'expose aria-pressed true', actual: button?.getAttribute('aria-pressed'), expected: 'true' })
  },
})

export const unpressedMuteToggle = story({
  intent: 'Create an unpressed "Mute notifications" toggle button',
  template: ToggleButton,
  args: { pressed: false, children: 'Mute notifications' },
})

export const disabledPinToggle = story({
  intent: 'Create a disabled "Pin to top" toggle button that is not pressed',
  template: ToggleButton,
  args: { disabled: true, children: 'Pin to top' },
})

export const formattingToolbar = story({
  intent: 'Create a text formatting toolbar with Bold, Italic and Underline toggle buttons where Italic is pressed',
  template: FormattingToolbar,
  args: {
    label: 'Text formatting',
    tools: [
      { id: 'bold', name: 'Bold', pressed: false },
      { id: 'italic', name: 'Italic', pressed: true },
      { id: 'underline', name: 'Underline', pressed: false },
    ],
  },
})

export const shuffleOnLocked = story({
  intent: 'A "Shuffle" control that is switched on but cannot be turned off during a shared listening session',
  template: ToggleButton,
  args: { pressed: true, disabled: true, children: 'Shuffle' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Shuffle')
    assert({ given: 'shuffle on', should: 'expose aria-pressed true', actual: button?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'a shared session', should: 'be disabled', actual: button?.disabled, expected: true })
  },
})

export const paragraphAlignmentCenter = story({
  intent: 'A "Paragraph alignment" bar with Left, Center, Right and Justify where Center is active',
  template: FormattingToolbar,
  args: {
    label: 'Paragraph alignment',
    tools: [
      { id: 'left', name: 'Left', pressed: false },
      { id: 'center', name: 'Center', pressed: true },
      { id: 'right', name: 'Right', pressed: false },
      { id: 'justify', name: 'Justify', pressed: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const center = await findByAttribute('data-tool', 'center')
    const left = await findByAttribute('data-tool', 'left')
    assert({ given: 'centered text', should: 'press Center', actual: center?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'centered text', should: 'not press Left', actual: left?.getAttribute('aria-pressed'), expected: 'false' })
  },
})

export const editorViewOptions = story({
  intent: 'Code editor view options named "View options": "Wrap lines" and "Show whitespace" on, "Minimap" off',
  template: FormattingToolbar,
  args: {
    label: 'View options',
    tools: [
      { id: 'wrap', name: 'Wrap lines', pressed: true },
      { id: 'whitespace', name: 'Show whitespace', pressed: true },
      { id: 'minimap', name: 'Minimap', pressed: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const minimap = await findByAttribute('data-tool', 'minimap')
    const wrap = await findByAttribute('data-tool', 'wrap')
    assert({ given: 'minimap off', should: 'not be pressed', actual: minimap?.getAttribute('aria-pressed'), expected: 'false' })
    assert({ given: 'wrapping on', should: 'be pressed', actual: wrap?.getAttribute('aria-pressed'), expected: 'true' })
  },
})

export const listStyleNumbered = story({
  intent: 'A "List style" toolbar with "Bulleted" and "Numbered" toggle buttons where Numbered is selected',
  template: FormattingToolbar,
  args: {
    label: 'List style',
    tools: [
      { id: 'bulleted', name: 'Bulleted', pressed: false },
      { id: 'numbered', name: 'Numbered', pressed: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const numbered = await findByAttribute('data-tool', 'numbered')
    const bulleted = await findByAttribute('data-tool', 'bulleted')
    assert({ given: 'a numbered list', should: 'press Numbered', actual: numbered?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'a numbered list', should: 'not press Bulleted', actual: bulleted?.getAttribute('aria-pressed'), expected: 'false' })
  },
})

export const mapLayerToggles = story({
  intent: 'Map overlay switches named "Map layers": "Traffic", "Transit", "Bike lanes" and "Terrain", with only Traffic and Terrain shown',
  template: FormattingToolbar,
  args: {
    label: 'Map layers',
    tools: [
      { id: 'traffic', name: 'Traffic', pressed: true },
      { id: 'transit', name: 'Transit', pressed: false },
      { id: 'bike-lanes', name: 'Bike lanes', pressed: false },
      { id: 'terrain', name: 'Terrain', pressed: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const toolbar = await findByAttribute('role', 'toolbar')
    const terrain = await findByAttribute('data-tool', 'terrain')
    const transit = await findByAttribute('data-tool', 'transit')
    assert({ given: 'a layer switcher', should: 'be named Map layers', actual: toolbar?.getAttribute('aria-label'), expected: 'Map layers' })
    assert({ given: 'terrain shown', should: 'be pressed', actual: terrain?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'transit hidden', should: 'not be pressed', actual: transit?.getAttribute('aria-pressed'), expected: 'false' })
  },
})

export const chartSeriesAllVisible = story({
  intent: 'A "Visible series" legend for a sales chart with "Revenue", "Costs" and "Profit" toggles, all currently shown',
  template: FormattingToolbar,
  args: {
    label: 'Visible series',
    tools: [
      { id: 'revenue', name: 'Revenue', pressed: true },
      { id: 'costs', name: 'Costs', pressed: true },
      { id: 'profit', name: 'Profit', pressed: true },
    ],
  },
  play: async ({ assert, findByAttribute, findByText }) => {
    const toolbar = await findByAttribute('role', 'toolbar')
    const costs = await findByText('Costs')
    assert({ given: 'a chart legend', should: 'be named Visible series', actual: toolbar?.getAttribute('aria-label'), expected: 'Visible series' })
    assert({ given: 'every series shown', should: 'press Costs', actual: costs?.getAttribute('aria-pressed'), expected: 'true' })
  },
})

export const savedRecipeFavourite = story({
  intent: 'A "Save to favourites" toggle on a recipe page that is already switched on',
  template: ToggleButton,
  args: { pressed: true, children: 'Save to favourites' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Save to favourites')
    assert({ given: 'a saved recipe', should: 'expose aria-pressed true', actual: button?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'an available toggle', should: 'be enabled', actual: button?.disabled, expected: false })
  },
})

export const expressTrackingForcedOn = story({
  intent: 'Build a "Delivery alerts" toggle that is on and greyed out, because express parcels always send tracking updates',
  template: ToggleButton,
  args: { pressed: true, disabled: true, children: 'Delivery alerts' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Delivery alerts')
    assert({ given: 'alerts forced on', should: 'expose aria-pressed true', actual: button?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'an express parcel', should: 'be disabled', actual: button?.disabled, expected: true })
  },
})

export const metronomeOff = story({
  intent: 'Show a "Metronome" button for a piano practice app that starts in the off position',
  template: ToggleButton,
  args: { pressed: false, children: 'Metronome' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Metronome')
    assert({ given: 'a metronome that is off', should: 'expose aria-pressed false', actual: button?.getAttribute('aria-pressed'), expected: 'false' })
  },
})

export const menuDietaryFilters = story({
  intent: 'A "Dietary filters" toolbar on a restaurant menu with "Vegan", "Gluten free" and "Nut free" toggles, of which only Gluten free is active',
  template: FormattingToolbar,
  args: {
    label: 'Dietary filters',
    tools: [
      { id: 'vegan', name: 'Vegan', pressed: false },
      { id: 'gluten-free', name: 'Gluten free', pressed: true },
      { id: 'nut-free', name: 'Nut free', pressed: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const toolbar = await findByAttribute('role', 'toolbar')
    const glutenFree = await findByAttribute('data-tool', 'gluten-free')
    const vegan = await findByAttribute('data-tool', 'vegan')
    assert({ given: 'a menu filter bar', should: 'be named Dietary filters', actual: toolbar?.getAttribute('aria-label'), expected: 'Dietary filters' })
    assert({ given: 'gluten free chosen', should: 'be pressed', actual: glutenFree?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'vegan not chosen', should: 'not be pressed', actual: vegan?.getAttribute('aria-pressed'), expected: 'false' })
  },
})

export const workoutDaysNoneChosen = story({
  intent: 'Create a "Training days" group of toggles "Mon", "Tue", "Wed", "Thu" and "Fri" for a fitness plan, none of them selected yet',
  template: FormattingToolbar,
  args: {
    label: 'Training days',
    tools: [
      { id: 'mon', name: 'Mon', pressed: false },
      { id: 'tue', name: 'Tue', pressed: false },
      { id: 'wed', name: 'Wed', pressed: false },
      { id: 'thu', name: 'Thu', pressed: false },
      { id: 'fri', name: 'Fri', pressed: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const toolbar = await findByAttribute('role', 'toolbar')
    const monday = await findByAttribute('data-tool', 'mon')
    const friday = await findByAttribute('data-tool', 'fri')
    assert({ given: 'a day picker', should: 'be named Training days', actual: toolbar?.getAttribute('aria-label'), expected: 'Training days' })
    assert({ given: 'no day chosen', should: 'not press Mon', actual: monday?.getAttribute('aria-pressed'), expected: 'false' })
    assert({ given: 'no day chosen', should: 'not press Fri', actual: friday?.getAttribute('aria-pressed'), expected: 'false' })
  },
})

export const trainSeatPreferences = story({
  intent: 'Train booking "Seat preferences" with "Window", "Quiet coach" and "Near luggage rack" toggles, the first two turned on',
  template: FormattingToolbar,
  args: {
    label: 'Seat preferences',
    tools: [
      { id: 'window', name: 'Window', pressed: true },
      { id: 'quiet-coach', name: 'Quiet coach', pressed: true },
      { id: 'luggage-rack', name: 'Near luggage rack', pressed: false },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const quiet = await findByAttribute('data-tool', 'quiet-coach')
    const luggage = await findByAttribute('data-tool', 'luggage-rack')
    assert({ given: 'a quiet coach wanted', should: 'be pressed', actual: quiet?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'no luggage rack wanted', should: 'not be pressed', actual: luggage?.getAttribute('aria-pressed'), expected: 'false' })
  },
})
