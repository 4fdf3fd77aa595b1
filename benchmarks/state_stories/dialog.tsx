
export const changeEmailDialog = story({
  intent: 'A "Change email address" modal with a "Current email address" field showing "lee.park@example.com" that can\'t be edited, an obligatory "New email address" field, a "Cancel" button and a primary "Update email" submit',
  template: () => (
    <Dialog id='change-email' title='Change email address'>
      <form {...styles.field}>
        <label htmlFor='current-email'>Current email address</label>
        <input id='current-email' name='currentEmail' type='email' value='lee.park@example.com' readOnly={true} {...styles.input} />
        <label htmlFor='new-email'>New email address</label>
        <input id='new-email' name='newEmail' type='email' required={true} {...styles.input} />
        <footer {...styles.footer}>
          <DialogButton p-trigger={{ click: 'close' }}>Cancel</DialogButton>
          <DialogButton tone='primary' type='submit'>
            Update email
          </DialogButton>
        </footer>
      </form>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('id', 'current-email')
    const next = await findByAttribute('id', 'new-email')
    assert({ given: 'the current address', should: 'be read-only', actual: current?.readOnly, expected: true })
    assert({ given: 'the new address', should: 'be required', actual: next?.required, expected: true })
  },
})

export const redeemGiftCardDialog = story({
  intent: 'A "Redeem gift card" modal whose "Gift card code" field holds "GC-12" and fails validation with the message "Gift card codes have 12 characters", plus a "Cancel" button and a primary "Redeem" submit',
  template: () => (
    <Dialog id='redeem-gift-card' title='Redeem gift card'>
      <form {...styles.field}>
        <label htmlFor='gift-card-code'>Gift card code</label>
        <input
          id='gift-card-code'
          name='giftCardCode'
          type='text'
          value='GC-12'
          aria-invalid='true'
          aria-describedby='gift-card-code-error'
          {...styles.input}
        />
        <p id='gift-card-code-error' {...styles.body}>
          Gift card codes have 12 characters
        </p>
        <footer {...styles.footer}>
          <DialogButton p-trigger={{ click: 'close' }}>Cancel</DialogButton>
          <DialogButton tone='primary' type='submit'>
            Redeem
          </DialogButton>
        </footer>
      </form>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'gift-card-code')
    assert({ given: 'a code that fails validation', should: 'be invalid', actual: input?.getAttribute('aria-invalid'), expected: 'true' })
    assert({ given: 'an error message', should: 'reference it', actual: input?.getAttribute('aria-describedby'), expected: 'gift-card-code-error' })
  },
})
