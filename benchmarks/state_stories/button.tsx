
export const renewLoansInactive = story({
  intent: 'A primary "Renew all loans" button on a library account page that stays inactive until at least one borrowed book is chosen',
  template: Button,
  args: { variant: 'primary', disabled: true, children: 'Renew all loans' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Renew all loans')
    assert({ given: 'no book chosen', should: 'be disabled', actual: button?.disabled, expected: true })
  },
})

export const claimRefundLocked = story({
  intent: 'A secondary "Claim refund" button that is locked because the return window has closed',
  template: Button,
  args: { variant: 'secondary', disabled: true, children: 'Claim refund' },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Claim refund')
    assert({ given: 'a closed return window', should: 'be disabled', actual: button?.disabled, expected: true })
  },
})

export const publishingPostInProgress = story({
  intent: 'A main-style "Publishing post" button in a blog editor, shown in progress with a loading indicator while the article goes live',
  template: Button,
  args: { variant: 'primary', loading: true, children: 'Publishing post' },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('aria-busy', 'true')
    assert({ given: 'a post being published', should: 'mark the button busy', actual: button?.textContent, expected: 'Publishing post' })
  },
})

export const syncingContactsStillWorking = story({
  intent: 'A secondary submit button "Syncing contacts" that is still working, so a second tap does nothing until it finishes',
  template: Button,
  args: { variant: 'secondary', type: 'submit', loading: true, children: 'Syncing contacts' },
  play: async ({ assert, findByAttribute }) => {
    const button = await findByAttribute('aria-busy', 'true')
    assert({ given: 'a sync under way', should: 'ignore further taps', actual: button?.disabled, expected: true })
    assert({ given: 'a form action', should: 'be a submit button', actual: button?.getAttribute('type'), expected: 'submit' })
  },
})

export const checkoutActionsVoucherOrder = story({
  intent: 'A "Checkout actions" group with a secondary "Apply voucher" button that is not clickable yet because no code is entered, next to a primary "Placing order" button that shows a spinner while it waits on the server',
  template: () => (
    <div role='group' aria-label='Checkout actions'>
      <Button variant='secondary' disabled={true}>
        Apply voucher
      </Button>
      <Button variant='primary' loading={true}>
        Placing order
      </Button>
    </div>
  ),
  play: async ({ assert, findByText, findByAttribute }) => {
    const voucher = await findByText('Apply voucher')
    const busy = await findByAttribute('aria-busy', 'true')
    assert({ given: 'no voucher code', should: 'disable Apply voucher', actual: voucher?.disabled, expected: true })
    assert({ given: 'an order being placed', should: 'mark the order button busy', actual: busy?.textContent, expected: 'Placing order' })
  },
})
