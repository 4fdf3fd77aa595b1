
export const birdAtlasUnavailable = story({
  intent: 'A bookshop tile for the "Illustrated atlas of birds" at 45 dollars, photo "/images/bird-atlas.jpg", blurb "Four hundred species painted in watercolour, with range maps.", currently unavailable so its "Add to cart" button can\'t be used',
  template: ProductCard,
  args: {
    id: 'bird-atlas',
    name: 'Illustrated atlas of birds',
    price: 45,
    description: 'Four hundred species painted in watercolour, with range maps.',
    image: '/images/bird-atlas.jpg',
    inStock: false,
  },
  play: async ({ assert, findByText }) => {
    const stock = await findByText('USD 45, out of stock')
    const button = await findByText('Add to cart')
    assert({ given: 'an unavailable book', should: 'say it is out of stock', actual: stock?.textContent, expected: 'USD 45, out of stock' })
    assert({ given: 'an unavailable book', should: 'block adding to cart', actual: button?.disabled, expected: true })
  },
})

export const podcastFollowedCard = story({
  intent: 'A podcast card titled "Night Garden Radio" with the line "New episode every Friday", a "Follow show" toggle that is already switched on, and an ordinary "Play latest episode" button',
  template: () => (
    <Card headingId='night-garden-title' title='Night Garden Radio'>
      <p {...styles.meta}>New episode every Friday</p>
      <footer {...styles.actions}>
        <CardButton aria-pressed='true' p-trigger={{ click: 'toggleFollow' }}>
          Follow show
        </CardButton>
        <CardButton p-trigger={{ click: 'playLatest' }}>Play latest episode</CardButton>
      </footer>
    </Card>
  ),
  play: async ({ assert, findByText }) => {
    const follow = await findByText('Follow show')
    assert({ given: 'a show the listener follows', should: 'show the toggle as on', actual: follow?.getAttribute('aria-pressed'), expected: 'true' })
  },
})

export const invoicesFetchingCard = story({
  intent: 'A "Monthly invoices" card whose contents are still loading, announcing "Fetching your invoices", with a "Download all" button that stays inactive until they arrive',
  template: () => (
    <Card headingId='invoices-title' title='Monthly invoices' aria-busy='true'>
      <p role='status' {...styles.meta}>
        Fetching your invoices
      </p>
      <footer {...styles.actions}>
        <CardButton disabled={true}>Download all</CardButton>
      </footer>
    </Card>
  ),
  play: async ({ assert, findByAttribute, findByText }) => {
    const article = await findByAttribute('aria-labelledby', 'invoices-title')
    const download = await findByText('Download all')
    assert({ given: 'invoices still loading', should: 'mark the card busy', actual: article?.getAttribute('aria-busy'), expected: 'true' })
    assert({ given: 'invoices still loading', should: 'hold back the download', actual: download?.disabled, expected: true })
  },
})
