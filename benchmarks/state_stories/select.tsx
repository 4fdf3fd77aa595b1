
export const warehouseFrozenLeeds = story({
  intent: 'A "Warehouse" dropdown that can\'t be changed right now, stuck on Leeds, listing Leeds, Bristol and Glasgow',
  template: Select,
  args: {
    id: 'warehouse',
    label: 'Warehouse',
    value: 'leeds',
    disabled: true,
    options: [
      { value: 'leeds', label: 'Leeds' },
      { value: 'bristol', label: 'Bristol' },
      { value: 'glasgow', label: 'Glasgow' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'warehouse')
    assert({ given: 'a frozen menu', should: 'be disabled', actual: select?.disabled, expected: true })
  },
})

export const guestCountObligatory = story({
  intent: 'An obligatory "Number of guests" dropdown for a table booking, opening on "How many?", with the choices 1, 2, 3 and 4',
  template: Select,
  args: {
    id: 'guests',
    label: 'Number of guests',
    required: true,
    placeholder: 'How many?',
    options: [
      { value: '1', label: '1' },
      { value: '2', label: '2' },
      { value: '3', label: '3' },
      { value: '4', label: '4' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'guests')
    assert({ given: 'an obligatory field', should: 'be required', actual: select?.required, expected: true })
  },
})

export const shoeSizeMissing = story({
  intent: 'A "Shoe size" menu that has to be answered, opening on "Select size", with sizes 38, 39, 40 and 41, and showing the problem "Choose a size to add to your bag"',
  template: Select,
  args: {
    id: 'shoe-size',
    label: 'Shoe size',
    required: true,
    placeholder: 'Select size',
    error: 'Choose a size to add to your bag',
    options: [
      { value: '38', label: '38' },
      { value: '39', label: '39' },
      { value: '40', label: '40' },
      { value: '41', label: '41' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'shoe-size')
    assert({ given: 'no size picked', should: 'be marked invalid', actual: select?.getAttribute('aria-invalid'), expected: 'true' })
  },
})

export const stylistPriyaSet = story({
  intent: 'A "Stylist" menu for a haircut booking with Priya, Tom and "Marco (on holiday)", where Priya is already set as the choice and Marco is not bookable',
  template: Select,
  args: {
    id: 'stylist',
    label: 'Stylist',
    value: 'priya',
    options: [
      { value: 'priya', label: 'Priya' },
      { value: 'tom', label: 'Tom' },
      { value: 'marco', label: 'Marco (on holiday)', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'stylist')
    assert({ given: 'a booked stylist', should: 'select Priya', actual: select?.value, expected: 'priya' })
  },
})

export const petTypeCatRequired = story({
  intent: 'A "Pet type" field on a vet sign-up form that can\'t be left blank, currently reading Cat, out of Dog, Cat, Rabbit and Bird',
  template: Select,
  args: {
    id: 'pet-type',
    label: 'Pet type',
    required: true,
    value: 'cat',
    options: [
      { value: 'dog', label: 'Dog' },
      { value: 'cat', label: 'Cat' },
      { value: 'rabbit', label: 'Rabbit' },
      { value: 'bird', label: 'Bird' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const select = await findByAttribute('id', 'pet-type')
    assert({ given: 'a saved pet type', should: 'select Cat', actual: select?.value, expected: 'cat' })
    assert({ given: 'a field that cannot be blank', should: 'be required', actual: select?.required, expected: true })
  },
})
