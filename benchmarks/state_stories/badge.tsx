
export const suitAlterationStageNow = story({
  intent: 'A "Suit alteration" list of stage tags, "Measured" in green, "Cutting" in blue and "Fitting" in grey, with the blue "Cutting" tag marked as the step the tailor is working on right now',
  template: () => (
    <ul aria-label='Suit alteration' {...styles.list}>
      <li>
        <Badge tone='success'>Measured</Badge>
      </li>
      <li aria-current='step'>
        <Badge tone='info'>Cutting</Badge>
      </li>
      <li>
        <Badge tone='neutral'>Fitting</Badge>
      </li>
    </ul>
  ),
  play: async ({ assert, findByAttribute }) => {
    const stage = await findByAttribute('aria-current', 'step')
    assert({ given: 'a suit being cut', should: 'mark Cutting as the step in progress', actual: stage?.textContent, expected: 'Cutting' })
  },
})

export const contactsSyncingBusyTag = story({
  intent: 'A blue live status tag reading "Syncing contacts" that tells screen readers it is busy while the address book is still being updated',
  template: Badge,
  args: { tone: 'info', role: 'status', 'aria-busy': 'true', children: 'Syncing contacts' },
  play: async ({ assert, findByText }) => {
    const tag = await findByText('Syncing contacts')
    assert({ given: 'a sync in progress', should: 'mark the status as busy', actual: tag?.getAttribute('aria-busy'), expected: 'true' })
  },
})
