
export const tenantPhotoUploadingBusy = story({
  intent: 'An initials avatar "RB" for the tenant Rosa Bianchi, marked busy while her new profile photo is still being processed',
  template: Avatar,
  args: { name: 'Rosa Bianchi', initials: 'RB', 'aria-busy': 'true' },
  play: async ({ assert, findByAttribute }) => {
    const avatar = await findByAttribute('aria-label', 'Rosa Bianchi')
    assert({ given: 'a photo still processing', should: 'mark the avatar busy', actual: avatar?.getAttribute('aria-busy'), expected: 'true' })
  },
})

export const deactivatedMemberInactive = story({
  intent: 'A small initials avatar "GF" for Gustav Falk, a gym member whose account was closed, so the avatar is marked as inactive',
  template: Avatar,
  args: { name: 'Gustav Falk', initials: 'GF', size: 'small', 'aria-disabled': 'true' },
  play: async ({ assert, findByAttribute }) => {
    const avatar = await findByAttribute('aria-label', 'Gustav Falk')
    assert({ given: 'a closed account', should: 'mark the avatar inactive', actual: avatar?.getAttribute('aria-disabled'), expected: 'true' })
  },
})
