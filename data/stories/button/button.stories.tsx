import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './button.css.ts'

export const meta = {
  title: 'Button',
  description: 'Action buttons with primary and secondary variants',
}

const Spinner: FT = () => <span {...styles.spinner} role='status' aria-label='Loading'></span>

const Button: FT<{
  variant?: 'primary' | 'secondary'
  disabled?: boolean
  loading?: boolean
  type?: string
}> = ({ variant = 'primary', disabled = false, loading = false, type = 'button', children, ...rest }) => (
  <button
    type={type}
    disabled={disabled || loading}
    aria-busy={loading ? 'true' : undefined}
    {...joinStyles(styles.button, variant === 'primary' && styles.primary, variant === 'secondary' && styles.secondary, disabled && styles.disabled)}
    {...rest}
  >
    {loading && <Spinner />}
    {children}
  </button>
)

export const primaryButton = story({
  intent: 'Create a primary button labelled "Save changes"',
  template: Button,
  args: { variant: 'primary', children: 'Save changes' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Save changes')
    assert({ given: 'a primary button', should: 'render the label', actual: button?.textContent, expected: 'Save changes' })
  },
})

export const secondaryButton = story({
  intent: 'Create a secondary button that says "Cancel"',
  template: Button,
  args: { variant: 'secondary', children: 'Cancel' },
})

export const disabledButton = story({
  intent: 'Create a disabled "Submit order" button',
  template: Button,
  args: { disabled: true, children: 'Submit order' },
})

export const loadingButton = story({
  description: 'Create a primary button showing a loading spinner while "Uploading" is in progress',
  template: () => (
    <Button loading={true}>Uploading</Button>
  ),
})

export const createAccountSubmit = story({
  intent: 'A form submit control reading "Create account" in the main emphasis style',
  template: Button,
  args: { type: 'submit', children: 'Create account' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Create account')
    assert({ given: 'a submit button', should: 'submit its form', actual: button?.getAttribute('type'), expected: 'submit' })
  },
})

export const exportingCsvSecondaryBusy = story({
  intent: 'A low-emphasis "Exporting CSV" action that is busy: it shows the spinner and cannot be pressed again',
  template: Button,
  args: { variant: 'secondary', loading: true, children: 'Exporting CSV' },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('aria-busy', 'true')
    assert({ given: 'a busy action', should: 'be disabled', actual: button?.disabled, expected: true })
  },
})

export const archiveSecondaryUnavailable = story({
  intent: 'Grey out a secondary "Archive" action so it cannot be clicked until something is selected',
  template: Button,
  args: { variant: 'secondary', disabled: true, children: 'Archive' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Archive')
    assert({ given: 'nothing selected', should: 'be disabled', actual: button?.disabled, expected: true })
  },
})

export const bookingSeatsBusy = story({
  intent: 'Show a primary "Reserving seats" button that spins and cannot be pressed while the theatre booking is processed',
  template: Button,
  args: { variant: 'primary', loading: true, children: 'Reserving seats' },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('aria-busy', 'true')
    assert({ given: 'a booking in progress', should: 'block further presses', actual: button?.disabled, expected: true })
    assert({ given: 'a booking in progress', should: 'show a loading spinner', actual: button?.querySelector('[role="status"]')?.getAttribute('aria-label'), expected: 'Loading' })
  },
})

export const transferFundsSubmitDisabled = story({
  intent: 'A banking form\'s primary "Transfer funds" submit button that stays greyed out until an amount is typed',
  template: Button,
  args: { variant: 'primary', type: 'submit', disabled: true, children: 'Transfer funds' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Transfer funds')
    assert({ given: 'no amount yet', should: 'be disabled', actual: button?.disabled, expected: true })
    assert({ given: 'a form action', should: 'be a submit button', actual: button?.getAttribute('type'), expected: 'submit' })
  },
})

export const clearFiltersReset = story({
  intent: 'Add a secondary reset button labelled "Clear filters" that empties a job search form',
  template: Button,
  args: { variant: 'secondary', type: 'reset', children: 'Clear filters' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Clear filters')
    assert({ given: 'a filter form', should: 'reset the form', actual: button?.getAttribute('type'), expected: 'reset' })
  },
})

export const bookAppointmentButton = story({
  intent: 'Build a clinic page call to action: a high-emphasis "Book appointment" button that is ready to click',
  template: Button,
  args: { variant: 'primary', children: 'Book appointment' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Book appointment')
    assert({ given: 'an idle action', should: 'be enabled', actual: button?.disabled, expected: false })
  },
})

export const wateringControlsPair = story({
  intent: 'A garden irrigation control group named "Watering controls" with a secondary "Skip today" button beside a primary "Start watering" button that is busy running',
  template: () => (
    <div role='group' aria-label='Watering controls'>
      <Button variant='secondary'>Skip today</Button>
      <Button variant='primary' loading={true}>
        Start watering
      </Button>
    </div>
  ),
  play: async ({ assert, findByAttribute }) => {
    const busy = await findByAttribute('aria-busy', 'true')
    assert({ given: 'watering in progress', should: 'mark the start button busy', actual: busy?.textContent, expected: 'Start watering' })
  },
})
