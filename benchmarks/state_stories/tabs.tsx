
export const forecastTomorrowFront = story({
  intent: 'A "Forecast" tab strip of Today, Tomorrow and Weekend with Tomorrow brought to the front; their panels say "Sunny, 22 degrees", "Light rain, 17 degrees" and "Windy, 15 degrees"',
  template: Tabs,
  args: {
    id: 'forecast',
    label: 'Forecast',
    selected: 'tomorrow',
    tabs: [
      { id: 'today', label: 'Today', content: 'Sunny, 22 degrees' },
      { id: 'tomorrow', label: 'Tomorrow', content: 'Light rain, 17 degrees' },
      { id: 'weekend', label: 'Weekend', content: 'Windy, 15 degrees' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const tomorrow = await findByAttribute('id', 'forecast-tab-tomorrow')
    assert({ given: 'the tab in front', should: 'be selected', actual: tomorrow?.getAttribute('aria-selected'), expected: 'true' })
  },
})

export const orderHistoryReturnsBlocked = story({
  intent: 'An "Order history" tab set with "Open orders", reading "Two parcels on the way.", and "Returns", reading "Returns open once an order is delivered.", where the Returns tab can\'t be clicked yet',
  template: Tabs,
  args: {
    id: 'orders',
    label: 'Order history',
    tabs: [
      { id: 'open', label: 'Open orders', content: 'Two parcels on the way.' },
      { id: 'returns', label: 'Returns', content: 'Returns open once an order is delivered.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const returns = await findByAttribute('id', 'orders-tab-returns')
    assert({ given: 'returns not yet possible', should: 'be aria-disabled', actual: returns?.getAttribute('aria-disabled'), expected: 'true' })
  },
})

export const phonePlanCallsRoamingOff = story({
  intent: '"Phone plan" tabs stacked down the side: Data ("12 GB left this month."), Calls ("Unlimited UK minutes.") and Roaming ("Roaming is not part of your plan."), with Calls picked out and Roaming off-limits',
  template: Tabs,
  args: {
    id: 'phone-plan',
    label: 'Phone plan',
    orientation: 'vertical',
    selected: 'calls',
    tabs: [
      { id: 'data', label: 'Data', content: '12 GB left this month.' },
      { id: 'calls', label: 'Calls', content: 'Unlimited UK minutes.' },
      { id: 'roaming', label: 'Roaming', content: 'Roaming is not part of your plan.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const calls = await findByAttribute('id', 'phone-plan-tab-calls')
    const roaming = await findByAttribute('id', 'phone-plan-tab-roaming')
    assert({ given: 'the picked tab', should: 'be selected', actual: calls?.getAttribute('aria-selected'), expected: 'true' })
    assert({ given: 'an off-limits tab', should: 'be aria-disabled', actual: roaming?.getAttribute('aria-disabled'), expected: 'true' })
  },
})

export const matchCentreLineupsActive = story({
  intent: 'A "Match centre" with Summary, Lineups and Stats tabs where Lineups is the active tab; the panels read "Rovers won 2-1 after extra time.", "Both teams started in a 4-4-2." and "Rovers had 58% possession."',
  template: Tabs,
  args: {
    id: 'match',
    label: 'Match centre',
    selected: 'lineups',
    tabs: [
      { id: 'summary', label: 'Summary', content: 'Rovers won 2-1 after extra time.' },
      { id: 'lineups', label: 'Lineups', content: 'Both teams started in a 4-4-2.' },
      { id: 'stats', label: 'Stats', content: 'Rovers had 58% possession.' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const lineups = await findByAttribute('id', 'match-tab-lineups')
    const summary = await findByAttribute('id', 'match-panel-summary')
    assert({ given: 'the active tab', should: 'be selected', actual: lineups?.getAttribute('aria-selected'), expected: 'true' })
    assert({ given: 'an inactive tab', should: 'hide its panel', actual: summary?.hidden, expected: true })
  },
})

export const groupProjectTeamLanding = story({
  intent: 'A "Group project" tab row of Brief ("Design a poster for the science fair."), Team ("You are working with Ana and Leo."), Submission ("Uploads open on 1 May.") and Feedback ("Feedback follows marking."), landing on Team, with Submission and Feedback both inactive until the deadline',
  template: Tabs,
  args: {
    id: 'project',
    label: 'Group project',
    selected: 'team',
    tabs: [
      { id: 'brief', label: 'Brief', content: 'Design a poster for the science fair.' },
      { id: 'team', label: 'Team', content: 'You are working with Ana and Leo.' },
      { id: 'submission', label: 'Submission', content: 'Uploads open on 1 May.', disabled: true },
      { id: 'feedback', label: 'Feedback', content: 'Feedback follows marking.', disabled: true },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const team = await findByAttribute('id', 'project-tab-team')
    const feedback = await findByAttribute('id', 'project-tab-feedback')
    assert({ given: 'the landing tab', should: 'be selected', actual: team?.getAttribute('aria-selected'), expected: 'true' })
    assert({ given: 'a tab waiting for the deadline', should: 'be aria-disabled', actual: feedback?.getAttribute('aria-disabled'), expected: 'true' })
  },
})
