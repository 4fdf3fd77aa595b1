
export const gardenCentreCompostUnfolded = story({
  intent: 'Garden centre help sections "Do you deliver compost?" ("Yes, within 10 miles for a flat fee of 5 pounds.") and "Can I return plants?" ("Healthy plants can come back within 7 days."), with the compost answer unfolded',
  template: Accordion,
  args: {
    id: 'garden-help',
    open: ['compost'],
    sections: [
      { id: 'compost', title: 'Do you deliver compost?', body: 'Yes, within 10 miles for a flat fee of 5 pounds.' },
      { id: 'plants', title: 'Can I return plants?', body: 'Healthy plants can come back within 7 days.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const compost = await findByAttribute('id', 'garden-help-compost-button')
    assert({ given: 'the unfolded answer', should: 'be expanded', actual: compost?.getAttribute('aria-expanded'), expected: 'true' })
  },
})

export const chargingOptionsRapidDimmed = story({
  intent: 'Electric car charging options as sections "Home charger" ("Fits any garage wall in about two hours."), "Public network" ("Over 900 stations with one card.") and "Rapid charging" ("Needs the long-range battery."), with the Home charger details already laid open and Rapid charging dimmed so it does nothing when clicked',
  template: Accordion,
  args: {
    id: 'charging',
    open: ['home'],
    sections: [
      { id: 'home', title: 'Home charger', body: 'Fits any garage wall in about two hours.' },
      { id: 'public', title: 'Public network', body: 'Over 900 stations with one card.' },
      { id: 'rapid', title: 'Rapid charging', body: 'Needs the long-range battery.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const home = await findByAttribute('id', 'charging-home-button')
    const rapid = await findByAttribute('id', 'charging-rapid-button')
    assert({ given: 'the laid-open section', should: 'be expanded', actual: home?.getAttribute('aria-expanded'), expected: 'true' })
    assert({ given: 'the dimmed section', should: 'be disabled', actual: rapid?.disabled, expected: true })
  },
})

export const loyaltyRewardsOutOfReach = story({
  intent: 'A single "Loyalty rewards" heading button, shut and out of reach for now so it cannot be clicked, hiding the text "Rewards start after your third order."',
  template: AccordionSection,
  args: {
    baseId: 'loyalty',
    section: { id: 'rewards', title: 'Loyalty rewards', body: 'Rewards start after your third order.', disabled: true },
  },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('id', 'loyalty-rewards-button')
    assert({ given: 'a section out of reach', should: 'be disabled', actual: button?.disabled, expected: true })
    assert({ given: 'a shut section', should: 'report collapsed', actual: button?.getAttribute('aria-expanded'), expected: 'false' })
  },
})

export const leaseSummaryRentNoticeOpen = story({
  intent: 'A flat lease summary with "Rent" ("950 pounds due on the 1st."), "Deposit" ("Held by the tenancy scheme.") and "Notice period" ("Two months in writing."), where Rent and Notice period are both pulled open and Deposit stays folded away',
  template: Accordion,
  args: {
    id: 'lease',
    open: ['rent', 'notice'],
    sections: [
      { id: 'rent', title: 'Rent', body: '950 pounds due on the 1st.' },
      { id: 'deposit', title: 'Deposit', body: 'Held by the tenancy scheme.' },
      { id: 'notice', title: 'Notice period', body: 'Two months in writing.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const notice = await findByAttribute('id', 'lease-notice-button')
    const deposit = await findByAttribute('id', 'lease-deposit-panel')
    assert({ given: 'a pulled-open section', should: 'be expanded', actual: notice?.getAttribute('aria-expanded'), expected: 'true' })
    assert({ given: 'a folded section', should: 'hide its panel', actual: deposit?.hidden, expected: true })
  },
})
