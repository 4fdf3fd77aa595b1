import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './select.css.ts'

export const meta = {
  title: 'Select',
  description: 'Native select menus with a visible label',
}

type Choice = { value: string; label: string; disabled?: boolean }

const Options: FT<{ options?: Choice[]; value?: string }> = ({ options = [], value }) => (
  <>
    {options.map((option) => (
      <option value={option.value} selected={option.value === value} disabled={option.disabled}>
        {option.label}
      </option>
    ))}
  </>
)

const Select: FT<{
  id: string
  label: string
  options?: Choice[]
  groups?: { label: string; options: Choice[] }[]
  value?: string
  placeholder?: string
  hint?: string
  error?: string
  required?: boolean
  disabled?: boolean
}> = ({ id, label, options = [], groups = [], value, placeholder, hint, error, required = false, disabled = false, ...rest }) => {
  const describedBy = [hint && `${id}-help`, error && `${id}-error`].filter((part) => part).join(' ')
  return (
    <div {...styles.field}>
      <label htmlFor={id} {...styles.label}>
        {label}
      </label>
      <select
        id={id}
        name={id}
        required={required}
        disabled={disabled}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
        p-trigger={{ change: 'choose' }}
        {...joinStyles(styles.select, error && styles.invalid, disabled && styles.disabled)}
        {...rest}
      >
        {placeholder && <option value=''>{placeholder}</option>}
        <Options options={options} value={value} />
        {groups.map((group) => (
          <optgroup label={group.label}>
            <Options options={group.options} value={value} />
          </optgroup>
        ))}
      </select>
      {hint && (
        <p id={`${id}-help`} {...styles.hint}>
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} {...styles.error}>
          {error}
        </p>
      )}
    </div>
  )
}

export const countrySelect = story({
  intent: 'Create a "Country" select with a "Choose a country" placeholder and four country options',
  template: Select,
  args: {
    id: 'country',
    label: 'Country',
    placeholder: 'Choose a country',
    options: [
      { value: 'ca', label: 'Canada' },
      { value: 'de', label: 'Germany' },
      { value: 'jp', label: 'Japan' },
      { value: 'br', label: 'Brazil' },
    ],
  },
})

export const preselectedLanguage = story({
  intent: 'Create a "Language" select of English, Español and Français where English is preselected, with the help text "Changes the language of menus and messages."',
  template: Select,
  args: {
    id: 'language',
    label: 'Language',
    value: 'en',
    hint: 'Changes the language of menus and messages.',
    options: [
      { value: 'en', label: 'English' },
      { value: 'es', label: 'Español' },
      { value: 'fr', label: 'Français' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'language')
    assert({ given: 'a preselected value', should: 'select English', actual: select?.value, expected: 'en' })
  },
})

export const disabledTimezone = story({
  description: 'Create a disabled "Time zone" select locked to Coordinated Universal Time',
  template: Select,
  args: {
    id: 'timezone',
    label: 'Time zone',
    value: 'utc',
    disabled: true,
    options: [
      { value: 'utc', label: 'Coordinated Universal Time (UTC)' },
      { value: 'cet', label: 'Central European Time (CET)' },
    ],
  },
})

export const requiredRoleError = story({
  intent: 'Create a required "Team role" select showing the error "Pick a role before inviting this person"',
  template: Select,
  args: {
    id: 'team-role',
    label: 'Team role',
    required: true,
    placeholder: 'Select a role',
    error: 'Pick a role before inviting this person',
    options: [
      { value: 'viewer', label: 'Viewer' },
      { value: 'editor', label: 'Editor' },
      { value: 'admin', label: 'Administrator' },
    ],
  },
})

export const groupedCarModels = story({
  intent: 'Create a car model select with options grouped by manufacturer using optgroup, where one model is unavailable',
  template: Select,
  args: {
    id: 'car-model',
    label: 'Car model',
    placeholder: 'Select a model',
    groups: [
      {
        label: 'Volvo',
        options: [
          { value: 'xc40', label: 'XC40' },
          { value: 'xc90', label: 'XC90' },
        ],
      },
      {
        label: 'Toyota',
        options: [
          { value: 'corolla', label: 'Corolla' },
          { value: 'supra', label: 'Supra (unavailable)', disabled: true },
        ],
      },
    ],
  },
})

export const cardExpiryMonth = story({
  intent: 'An "Expiry month" dropdown with the placeholder "MM", all twelve months as two-digit numbers from 01 to 12 and the hint "As printed on your card"',
  template: Select,
  args: {
    id: 'expiry-month',
    label: 'Expiry month',
    placeholder: 'MM',
    hint: 'As printed on your card',
    options: [
      { value: '01', label: '01' },
      { value: '02', label: '02' },
      { value: '03', label: '03' },
      { value: '04', label: '04' },
      { value: '05', label: '05' },
      { value: '06', label: '06' },
      { value: '07', label: '07' },
      { value: '08', label: '08' },
      { value: '09', label: '09' },
      { value: '10', label: '10' },
      { value: '11', label: '11' },
      { value: '12', label: '12' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'expiry-month')
    assert({ given: 'a placeholder and twelve months', should: 'offer thirteen options', actual: select?.querySelectorAll('option').length, expected: 13 })
  },
})

export const sortOrderNewestFirst = story({
  intent: 'A "Sort by" menu for search results offering Relevance, Newest first and "Price: low to high", where "Newest first" is the current choice',
  template: Select,
  args: {
    id: 'sort',
    label: 'Sort by',
    value: 'newest',
    options: [
      { value: 'relevance', label: 'Relevance' },
      { value: 'newest', label: 'Newest first' },
      { value: 'price-low', label: 'Price: low to high' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'sort')
    assert({ given: 'a chosen order', should: 'select newest', actual: select?.value, expected: 'newest' })
  },
})

export const departureAirportByCountry = story({
  intent: 'A "Departure airport" picker grouped by country, Norway (Oslo, Bergen) and Portugal (Lisbon, Porto), with Oslo already chosen',
  template: Select,
  args: {
    id: 'departure',
    label: 'Departure airport',
    value: 'osl',
    groups: [
      {
        label: 'Norway',
        options: [
          { value: 'osl', label: 'Oslo' },
          { value: 'bgo', label: 'Bergen' },
        ],
      },
      {
        label: 'Portugal',
        options: [
          { value: 'lis', label: 'Lisbon' },
          { value: 'opo', label: 'Porto' },
        ],
      },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'departure')
    assert({ given: 'a preselected airport', should: 'select Oslo', actual: select?.value, expected: 'osl' })
  },
})

export const requiredBloodType = story({
  intent: 'A "Blood type" dropdown that must be filled in, starting on "Select your blood type", listing A, B, AB and O, with the hint "Check your donor record if unsure"',
  template: Select,
  args: {
    id: 'blood-type',
    label: 'Blood type',
    required: true,
    placeholder: 'Select your blood type',
    hint: 'Check your donor record if unsure',
    options: [
      { value: 'a', label: 'A' },
      { value: 'b', label: 'B' },
      { value: 'ab', label: 'AB' },
      { value: 'o', label: 'O' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'blood-type')
    assert({ given: 'a mandatory field', should: 'be required', actual: select?.required, expected: true })
  },
})

export const tomatoVarietyGroups = story({
  intent: 'Create a "Tomato variety" select opening on "Pick a variety", grouped into Cherry (Sungold, Sweet Million) and Beefsteak (Brandywine, "Big Beef (out of stock)"), where Big Beef cannot be chosen',
  template: Select,
  args: {
    id: 'tomato',
    label: 'Tomato variety',
    placeholder: 'Pick a variety',
    groups: [
      {
        label: 'Cherry',
        options: [
          { value: 'sungold', label: 'Sungold' },
          { value: 'sweet-million', label: 'Sweet Million' },
        ],
      },
      {
        label: 'Beefsteak',
        options: [
          { value: 'brandywine', label: 'Brandywine' },
          { value: 'big-beef', label: 'Big Beef (out of stock)', disabled: true },
        ],
      },
    ],
  },
})

export const freightCarrierError = story({
  intent: 'Show a "Freight carrier" menu with DHL, FedEx and UPS where FedEx is the current pick but flagged with the error "FedEx does not serve this postcode"',
  template: Select,
  args: {
    id: 'carrier',
    label: 'Freight carrier',
    value: 'fedex',
    error: 'FedEx does not serve this postcode',
    options: [
      { value: 'dhl', label: 'DHL' },
      { value: 'fedex', label: 'FedEx' },
      { value: 'ups', label: 'UPS' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'carrier')
    assert({ given: 'a rejected carrier', should: 'be marked invalid', actual: select?.getAttribute('aria-invalid'), expected: 'true' })
  },
})

export const instrumentPlainMenu = story({
  intent: 'Put together a plain "Instrument" menu from an option list of Piano, Violin, Cello and Flute, with Cello showing as the selection',
  template: () => (
    <div {...styles.field}>
      <label htmlFor='instrument' {...styles.label}>
        Instrument
      </label>
      <select id='instrument' name='instrument' {...styles.select}>
        <Options
          value='cello'
          options={[
            { value: 'piano', label: 'Piano' },
            { value: 'violin', label: 'Violin' },
            { value: 'cello', label: 'Cello' },
            { value: 'flute', label: 'Flute' },
          ]}
        />
      </select>
    </div>
  ),
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'instrument')
    assert({ given: 'a chosen instrument', should: 'select Cello', actual: select?.value, expected: 'cello' })
  },
})

export const fixedAccountCurrency = story({
  intent: 'Show the "Account currency" menu greyed out and fixed on Euro, offering Euro, US dollar and Pound sterling, with the note "Contact your branch to switch currency"',
  template: Select,
  args: {
    id: 'currency',
    label: 'Account currency',
    value: 'eur',
    disabled: true,
    hint: 'Contact your branch to switch currency',
    options: [
      { value: 'eur', label: 'Euro' },
      { value: 'usd', label: 'US dollar' },
      { value: 'gbp', label: 'Pound sterling' },
    ],
  },
})
