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
