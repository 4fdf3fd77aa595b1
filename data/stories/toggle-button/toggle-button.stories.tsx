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
