
export const subtitlesToggledOn = story({
  intent: 'A "Subtitles" toggle on a video player that is toggled on',
  template: ToggleButton,
  args: { pressed: true, children: 'Subtitles' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Subtitles')
    assert({ given: 'subtitles on', should: 'expose aria-pressed true', actual: button?.getAttribute('aria-pressed'), expected: 'true' })
  },
})

export const repeatPlaylistUnavailable = story({
  intent: 'A "Repeat playlist" toggle that is off and unavailable because the play queue is empty',
  template: ToggleButton,
  args: { pressed: false, disabled: true, children: 'Repeat playlist' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Repeat playlist')
    assert({ given: 'an empty queue', should: 'be disabled', actual: button?.disabled, expected: true })
    assert({ given: 'repeat off', should: 'expose aria-pressed false', actual: button?.getAttribute('aria-pressed'), expected: 'false' })
  },
})

export const snapToGridEngaged = story({
  intent: 'A "Snap to grid" toggle in a drawing app, currently engaged',
  template: ToggleButton,
  args: { pressed: true, children: 'Snap to grid' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Snap to grid')
    assert({ given: 'snapping engaged', should: 'be pressed', actual: button?.getAttribute('aria-pressed'), expected: 'true' })
  },
})

export const cameraFlashForcedDown = story({
  intent: 'A camera app "Flash" toggle that is pushed in and frozen that way, because night mode forces the flash',
  template: ToggleButton,
  args: { pressed: true, disabled: true, children: 'Flash' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Flash')
    assert({ given: 'flash forced', should: 'be pressed', actual: button?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'night mode', should: 'be disabled', actual: button?.disabled, expected: true })
  },
})

export const pizzaToppingsLitUp = story({
  intent: 'A "Pizza toppings" toolbar with "Mushrooms", "Olives", "Peppers" and "Onions" toggles, where Olives and Onions are lit up and the rest are not',
  template: FormattingToolbar,
  args: {
    label: 'Pizza toppings',
    tools: [
      { id: 'mushrooms', name: 'Mushrooms', pressed: false },
      { id: 'olives', name: 'Olives', pressed: true },
      { id: 'peppers', name: 'Peppers', pressed: false },
      { id: 'onions', name: 'Onions', pressed: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const olives = await findByAttribute('data-tool', 'olives')
    const peppers = await findByAttribute('data-tool', 'peppers')
    assert({ given: 'olives chosen', should: 'be pressed', actual: olives?.getAttribute('aria-pressed'), expected: 'true' })
    assert({ given: 'peppers not chosen', should: 'not be pressed', actual: peppers?.getAttribute('aria-pressed'), expected: 'false' })
  },
})
