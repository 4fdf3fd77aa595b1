import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './radio-group.css.ts'

export const meta = {
  title: 'Radio group',
  description: 'Fieldsets of native radio buttons with a legend',
}

type Option = { value: string; label: string; hint?: string; disabled?: boolean }

const RadioOption: FT<{
  id: string
  name: string
  option: Option
  checked?: boolean
  invalid?: boolean
}> = ({ id, name, option, checked = false, invalid = false }) => (
  <label htmlFor={id} {...joinStyles(styles.option, option.disabled && styles.optionDisabled)}>
    <input
      type='radio'
      id={id}
      name={name}
      value={option.value}
      checked={checked}
      disabled={option.disabled}
      aria-invalid={invalid ? 'true' : undefined}
      p-trigger={{ change: 'select' }}
      {...styles.radio}
    />
    {option.label}
    {option.hint && <span {...styles.hint}>{option.hint}</span>}
  </label>
)

const RadioGroup: FT<{
  name: string
  legend: string
  options?: Option[]
  value?: string
  required?: boolean
  error?: string
  layout?: 'vertical' | 'horizontal'
}> = ({ name, legend, options = [], value, required = false, error, layout = 'vertical', ...rest }) => (
  <fieldset
    aria-describedby={error ? `${name}-error` : undefined}
    {...joinStyles(styles.fieldset, layout === 'horizontal' && styles.horizontal, error && styles.invalid)}
    {...rest}
  >
    <legend {...styles.legend}>
      {legend}
      {required && ' (required)'}
    </legend>
    {options.map((option) => (
      <RadioOption
        id={`${name}-${option.value}`}
        name={name}
        option={option}
        checked={option.value === value}
        invalid={Boolean(error)}
      />
    ))}
    {error && (
      <p id={`${name}-error`} {...styles.error}>
        {error}
      </p>
    )}
  </fieldset>
)

export const shippingSpeed = story({
  intent: 'Create a "Shipping speed" radio group with Standard, Express and Overnight options and Standard selected',
  template: RadioGroup,
  args: {
    name: 'shipping',
    legend: 'Shipping speed',
    value: 'standard',
    options: [
      { value: 'standard', label: 'Standard', hint: '5-7 business days' },
      { value: 'express', label: 'Express', hint: '2-3 business days' },
      { value: 'overnight', label: 'Overnight', hint: 'Next business day' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const standard = await findByAttribute('id', 'shipping-standard')
    assert({ given: 'the default value', should: 'check Standard', actual: standard?.checked, expected: true })
  },
})

export const planPicker = story({
  intent: 'Create a subscription plan picker with Free, Pro and Team radio options where nothing is selected yet',
  template: RadioGroup,
  args: {
    name: 'plan',
    legend: 'Choose a plan',
    options: [
      { value: 'free', label: 'Free' },
      { value: 'pro', label: 'Pro' },
      { value: 'team', label: 'Team' },
    ],
  },
})

export const unavailableOption = story({
  intent: 'Create a delivery time radio group where the "Same day" option is disabled because it is sold out',
  template: RadioGroup,
  args: {
    name: 'delivery',
    legend: 'Delivery time',
    value: 'morning',
    options: [
      { value: 'morning', label: 'Morning' },
      { value: 'afternoon', label: 'Afternoon' },
      { value: 'same-day', label: 'Same day', hint: 'Sold out', disabled: true },
    ],
  },
})

export const paymentMethodError = story({
  intent: 'Create a required "Payment method" radio group of Credit card, PayPal and Invoice showing the error "Select a payment method"',
  template: RadioGroup,
  args: {
    name: 'payment',
    legend: 'Payment method',
    required: true,
    error: 'Select a payment method',
    options: [
      { value: 'card', label: 'Credit card' },
      { value: 'paypal', label: 'PayPal' },
      { value: 'invoice', label: 'Invoice' },
    ],
  },
})

export const horizontalSizePicker = story({
  intent: 'Create a horizontal T-shirt size radio group with S, M, L and XL where M is selected',
  template: RadioGroup,
  args: {
    name: 'size',
    legend: 'T-shirt size',
    layout: 'horizontal',
    value: 'm',
    options: [
      { value: 's', label: 'S' },
      { value: 'm', label: 'M' },
      { value: 'l', label: 'L' },
      { value: 'xl', label: 'XL' },
    ],
  },
})

export const pizzaCrustDefault = story({
  intent: 'Let diners pick a "Crust": Thin, Classic or Stuffed, with Classic chosen by default',
  template: RadioGroup,
  args: {
    name: 'crust',
    legend: 'Crust',
    value: 'classic',
    options: [
      { value: 'thin', label: 'Thin' },
      { value: 'classic', label: 'Classic' },
      { value: 'stuffed', label: 'Stuffed' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const classic = await findByAttribute('id', 'crust-classic')
    assert({ given: 'the default crust', should: 'be checked', actual: classic?.checked, expected: true })
  },
})

export const experienceRatingRow = story({
  intent: 'Ask "How was your experience?" with five choices from 1 to 5 laid out in a single row and none picked',
  template: RadioGroup,
  args: {
    name: 'rating',
    legend: 'How was your experience?',
    layout: 'horizontal',
    options: [
      { value: '1', label: '1' },
      { value: '2', label: '2' },
      { value: '3', label: '3' },
      { value: '4', label: '4' },
      { value: '5', label: '5' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const three = await findByAttribute('id', 'rating-3')
    assert({ given: 'no answer yet', should: 'leave every choice unchecked', actual: three?.checked, expected: false })
  },
})

export const requiredSeatClass = story({
  intent: 'A mandatory "Cabin class" choice of Economy, Premium economy and Business, with Economy picked and Business greyed out and noted "Full"',
  template: RadioGroup,
  args: {
    name: 'cabin',
    legend: 'Cabin class',
    required: true,
    value: 'economy',
    options: [
      { value: 'economy', label: 'Economy' },
      { value: 'premium', label: 'Premium economy' },
      { value: 'business', label: 'Business', hint: 'Full', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const business = await findByAttribute('id', 'cabin-business')
    const economy = await findByAttribute('id', 'cabin-economy')
    assert({ given: 'a full cabin', should: 'be disabled', actual: business?.disabled, expected: true })
    assert({ given: 'the chosen cabin', should: 'be checked', actual: economy?.checked, expected: true })
  },
})

export const clinicVisitTypeError = story({
  intent: 'Build a "Visit type" radio group for a clinic with In person (hint "Main building, floor 2") and Video call (hint "Link sent by email"), nothing chosen, and the error "Tell us how you want to see the doctor"',
  template: RadioGroup,
  args: {
    name: 'visit',
    legend: 'Visit type',
    error: 'Tell us how you want to see the doctor',
    options: [
      { value: 'in-person', label: 'In person', hint: 'Main building, floor 2' },
      { value: 'video', label: 'Video call', hint: 'Link sent by email' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const video = await findByAttribute('id', 'visit-video')
    assert({ given: 'an unanswered question with an error', should: 'mark options invalid', actual: video?.getAttribute('aria-invalid'), expected: 'true' })
  },
})

export const wateringScheduleRow = story({
  intent: 'Lay out a mandatory "Watering schedule" side by side with Daily, Every other day and Weekly, where Weekly is already picked',
  template: RadioGroup,
  args: {
    name: 'watering',
    legend: 'Watering schedule',
    required: true,
    layout: 'horizontal',
    value: 'weekly',
    options: [
      { value: 'daily', label: 'Daily' },
      { value: 'every-other-day', label: 'Every other day' },
      { value: 'weekly', label: 'Weekly' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const weekly = await findByAttribute('id', 'watering-weekly')
    assert({ given: 'a saved schedule', should: 'check Weekly', actual: weekly?.checked, expected: true })
  },
})

export const lockedGradeLevel = story({
  intent: 'Show a "Grade level" choice closed for editing: Primary, Middle school and High school are all greyed out, with Middle school kept as the saved answer',
  template: RadioGroup,
  args: {
    name: 'grade',
    legend: 'Grade level',
    value: 'middle',
    options: [
      { value: 'primary', label: 'Primary', disabled: true },
      { value: 'middle', label: 'Middle school', disabled: true },
      { value: 'high', label: 'High school', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const primary = await findByAttribute('id', 'grade-primary')
    const middle = await findByAttribute('id', 'grade-middle')
    assert({ given: 'a closed question', should: 'disable every option', actual: primary?.disabled, expected: true })
    assert({ given: 'the saved answer', should: 'stay checked', actual: middle?.checked, expected: true })
  },
})

export const metronomeSoundOptions = story({
  intent: 'Assemble a "Metronome sound" fieldset from single radio options Woodblock, Beep and Cowbell, with Woodblock checked and Cowbell unavailable, noted "Premium only"',
  template: () => (
    <fieldset {...styles.fieldset}>
      <legend {...styles.legend}>Metronome sound</legend>
      <RadioOption id='click-woodblock' name='click' option={{ value: 'woodblock', label: 'Woodblock' }} checked={true} />
      <RadioOption id='click-beep' name='click' option={{ value: 'beep', label: 'Beep' }} />
      <RadioOption id='click-cowbell' name='click' option={{ value: 'cowbell', label: 'Cowbell', hint: 'Premium only', disabled: true }} />
    </fieldset>
  ),
  play: async ({ assert, findByAttribute }) => {
    const cowbell = await findByAttribute('id', 'click-cowbell')
    assert({ given: 'a premium sound', should: 'be disabled', actual: cowbell?.disabled, expected: true })
  },
})

export const statementDeliveryChoice = story({
  intent: 'A "Statement delivery" radio group where Email is already selected, "Paper by post" carries the note "$2 fee per month", and "Text message" cannot be picked yet, marked "Coming soon"',
  template: RadioGroup,
  args: {
    name: 'statements',
    legend: 'Statement delivery',
    value: 'email',
    options: [
      { value: 'email', label: 'Email' },
      { value: 'post', label: 'Paper by post', hint: '$2 fee per month' },
      { value: 'sms', label: 'Text message', hint: 'Coming soon', disabled: true },
    ],
  },
})
