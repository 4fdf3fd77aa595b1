
export const faresRefreshingBusy = story({
  intent: 'An informational notice headed "Refreshing prices" saying "Live fares are being updated." that is marked busy because its content is still loading',
  template: Alert,
  args: {
    variant: 'info',
    title: 'Refreshing prices',
    'aria-busy': 'true',
    children: 'Live fares are being updated.',
  },
  play: async ({ assert, findByAttribute }) => {
    const message = await findByAttribute('role', 'status')
    assert({ given: 'content still loading', should: 'be marked busy', actual: message?.getAttribute('aria-busy'), expected: 'true' })
  },
})

export const readingListSyncInProgress = story({
  intent: 'A neutral notice saying "Syncing your reading list" that is in the middle of updating, so screen readers wait for it to settle, with a close button named "Hide sync notice"',
  template: Alert,
  args: {
    dismissible: true,
    dismissLabel: 'Hide sync notice',
    'aria-busy': 'true',
    children: 'Syncing your reading list',
  },
  play: async ({ assert, findByAttribute }) => {
    const message = await findByAttribute('role', 'status')
    const close = await findByAttribute('aria-label', 'Hide sync notice')
    assert({ given: 'a sync in progress', should: 'be marked busy', actual: message?.getAttribute('aria-busy'), expected: 'true' })
    assert({ given: 'a dismissible notice', should: 'have a named close button', actual: close?.tagName, expected: 'BUTTON' })
  },
})
