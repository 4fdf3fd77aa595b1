
export const monsteraPlantTrail = story({
  intent: 'A garden centre trail "Plants" / "Houseplants" / "Monstera deliciosa", with "Monstera deliciosa" as the page the shopper has landed on',
  template: Breadcrumb,
  args: {
    items: [
      { label: 'Plants', href: '/plants' },
      { label: 'Houseplants', href: '/plants/houseplants' },
      { label: 'Monstera deliciosa', href: '/plants/houseplants/monstera-deliciosa' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'a plant page', should: 'mark the plant as the page shown', actual: current?.textContent, expected: 'Monstera deliciosa' })
  },
})

export const tenantPortalLeaseTrail = story({
  intent: 'A tenant portal navigation named "Tenant portal path" going "My home", "Documents", then "Tenancy agreement", which is the screen the renter is looking at',
  template: Breadcrumb,
  args: {
    label: 'Tenant portal path',
    items: [
      { label: 'My home', href: '/home' },
      { label: 'Documents', href: '/home/documents' },
      { label: 'Tenancy agreement', href: '/home/documents/tenancy-agreement' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'the agreement screen', should: 'mark it as where the renter is', actual: current?.textContent, expected: 'Tenancy agreement' })
  },
})

export const hikingSeasonCrumbs = story({
  intent: 'Put together a "Season guide" breadcrumb by hand from two items: "Hiking", a link back to the hiking section, and "Autumn routes", flagged as where the reader is right now',
  template: () => (
    <nav aria-label='Season guide'>
      <ol {...styles.list}>
        <BreadcrumbItem crumb={{ label: 'Hiking', href: '/outdoors/hiking' }} />
        <BreadcrumbItem crumb={{ label: 'Autumn routes', href: '/outdoors/hiking/autumn-routes' }} current={true} />
      </ol>
    </nav>
  ),
  play: async ({ assert, findByAttribute }) => {
    const current = await findByAttribute('aria-current', 'page')
    assert({ given: 'the autumn routes page', should: 'flag it as the reader\'s location', actual: current?.textContent, expected: 'Autumn routes' })
  },
})
