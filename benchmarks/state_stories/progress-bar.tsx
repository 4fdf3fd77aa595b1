
export const weddingVideoRenderFailed = story({
  intent: 'A "Rendering wedding video" bar that broke down at 40 percent, showing the message "Render stopped: not enough disk space"',
  template: ProgressBar,
  args: { id: 'render', label: 'Rendering wedding video', value: 40, error: 'Render stopped: not enough disk space' },
  play: async ({ assert, findByAttribute }) => {
    const alert = await findByAttribute('role', 'alert')
    assert({ given: 'a failed render', should: 'announce what went wrong', actual: alert?.textContent, expected: 'Render stopped: not enough disk space' })
  },
})

export const receiptScanStuck = story({
  intent: 'A "Scanning receipts" bar stuck at 7 of 20 receipts, read out as "7 of 20 receipts scanned", with the problem "Scanner lid is open" shown under it',
  template: ProgressBar,
  args: { id: 'receipts', label: 'Scanning receipts', value: 7, min: 0, max: 20, valueText: '7 of 20 receipts scanned', error: 'Scanner lid is open' },
  play: async ({ assert, findByAttribute }) => {
    const bar = await findByAttribute('role', 'progressbar')
    const alert = await findByAttribute('role', 'alert')
    assert({ given: 'seven of twenty receipts', should: 'announce a readable value', actual: bar?.getAttribute('aria-valuetext'), expected: '7 of 20 receipts scanned' })
    assert({ given: 'a stuck scan', should: 'report the problem', actual: alert?.textContent, expected: 'Scanner lid is open' })
  },
})

export const driverMatchingBusy = story({
  intent: 'A native progress element labelled "Matching you with a driver" that has no amount because the wait is unknown, flagged as busy, with the note "Usually under two minutes"',
  template: () => (
    <div {...styles.field}>
      <label htmlFor='driver-progress' {...styles.label}>
        Matching you with a driver
      </label>
      <progress id='driver-progress' aria-busy='true' {...styles.native}></progress>
      <p {...styles.hint}>Usually under two minutes</p>
    </div>
  ),
  play: async ({ assert, findByAttribute }) => {
    const progress = await findByAttribute('id', 'driver-progress')
    assert({ given: 'an unknown wait', should: 'leave the value unset', actual: progress?.hasAttribute('value'), expected: false })
    assert({ given: 'a search in progress', should: 'mark it busy', actual: progress?.getAttribute('aria-busy'), expected: 'true' })
  },
})
