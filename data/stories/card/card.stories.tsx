import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './card.css.ts'

export const meta = {
  title: 'Card',
  description: 'Article cards with a heading, body copy and actions',
}

const Card: FT<{ headingId: string; title: string }> = ({ headingId, title, children, ...rest }) => (
  <article aria-labelledby={headingId} {...styles.card} {...rest}>
    <header>
      <h2 id={headingId} {...styles.heading}>
        {title}
      </h2>
    </header>
    {children}
  </article>
)

const CardButton: FT<{ disabled?: boolean }> = ({ disabled = false, children, ...rest }) => (
  <button type='button' disabled={disabled} {...joinStyles(styles.button, disabled && styles.buttonDisabled)} {...rest}>
    {children}
  </button>
)

const ProductCard: FT<{
  id: string
  name: string
  price: number
  description: string
  image: string
  inStock?: boolean
}> = ({ id, name, price, description, image, inStock = true }) => (
  <Card headingId={`${id}-title`} title={name}>
    <img src={image} alt={name} {...styles.image} />
    <p {...styles.body}>{description}</p>
    <p {...styles.meta}>{inStock ? `USD ${price}, in stock` : `USD ${price}, out of stock`}</p>
    <footer {...styles.actions}>
      <CardButton disabled={!inStock} p-trigger={{ click: 'addToCart' }} aria-describedby={`${id}-title`}>
        Add to cart
      </CardButton>
    </footer>
  </Card>
)

export const productCard = story({
  intent: 'Create a product card for "Trail running shoes" with an image, price and an "Add to cart" button',
  template: ProductCard,
  args: {
    id: 'shoes',
    name: 'Trail running shoes',
    price: 129,
    description: 'Lightweight shoes with a grippy sole for muddy trails.',
    image: '/images/trail-shoes.jpg',
  },
})

export const soldOutProductCard = story({
  intent: 'Create a sold-out product card whose "Add to cart" button is disabled',
  template: ProductCard,
  args: {
    id: 'kettle',
    name: 'Copper kettle',
    price: 89,
    description: 'A hand-hammered stovetop kettle.',
    image: '/images/copper-kettle.jpg',
    inStock: false,
  },
})

export const articleTeaserCard = story({
  intent: 'Create a blog article teaser card with a publish date and a descriptive "Read more" link',
  template: () => (
    <Card headingId='teaser-title' title='Designing for keyboard users'>
      <p {...styles.meta}>Published 12 March 2024</p>
      <p {...styles.body}>Focus order, visible focus styles and skip links make or break keyboard navigation.</p>
      <a href='/blog/keyboard-users' {...styles.link}>
        Read more about designing for keyboard users
      </a>
    </Card>
  ),
})

export const loadingCard = story({
  intent: 'Create a card in a loading state that shows skeleton lines and announces that content is loading',
  template: () => (
    <Card headingId='loading-title' title='Recent activity' aria-busy='true'>
      <p role='status' {...styles.meta}>
        Loading recent activity
      </p>
      <span {...styles.skeleton} aria-hidden='true'></span>
      <span {...joinStyles(styles.skeleton, styles.skeletonShort)} aria-hidden='true'></span>
    </Card>
  ),
})

export const profileCard = story({
  intent: 'Create a team member profile card with a photo, role, and "Send message" and "View profile" actions',
  template: () => (
    <Card headingId='profile-title' title='Grace Hopper'>
      <div {...styles.header}>
        <img src='/images/grace-hopper.jpg' alt='Portrait of Grace Hopper' {...styles.avatar} />
        <p {...styles.meta}>Principal engineer, Compilers team</p>
      </div>
      <footer {...styles.actions}>
        <CardButton p-trigger={{ click: 'message' }}>Send message</CardButton>
        <CardButton p-trigger={{ click: 'viewProfile' }}>View profile</CardButton>
      </footer>
    </Card>
  ),
})

export const meetupEventCard = story({
  intent: 'An event tile for the "Community meetup" with a usable "Register" action and a greyed-out "Join waitlist" action',
  template: () => (
    <Card headingId='meetup-title' title='Community meetup'>
      <p {...styles.meta}>Thursday 18:30, Library hall</p>
      <footer {...styles.actions}>
        <CardButton p-trigger={{ click: 'register' }}>Register</CardButton>
        <CardButton disabled={true}>Join waitlist</CardButton>
      </footer>
    </Card>
  ),
  play: async ({ assert, findByText }) => {
    const waitlist = await findByText('Join waitlist')
    const register = await findByText('Register')
    assert({ given: 'open seats', should: 'keep the waitlist disabled', actual: waitlist?.disabled, expected: true })
    assert({ given: 'open seats', should: 'allow registering', actual: register?.disabled, expected: false })
  },
})

export const noSavedSearchesEmptyState = story({
  intent: 'An empty-state panel titled "No saved searches" explaining nothing is saved yet, offering one "Create search" action',
  template: () => (
    <Card headingId='saved-searches-title' title='No saved searches'>
      <p {...styles.body}>Save a search to get notified when new results match it.</p>
      <footer {...styles.actions}>
        <CardButton p-trigger={{ click: 'createSearch' }}>Create search</CardButton>
      </footer>
    </Card>
  ),
  play: async ({ assert, findByAttribute }) => {
    const article = await findByAttribute('aria-labelledby', 'saved-searches-title')
    assert({ given: 'an empty state', should: 'offer one action', actual: article?.querySelectorAll('button').length, expected: 1 })
  },
})

export const woolBlanketListing = story({
  intent: 'Sell a "Merino wool blanket" for 59 dollars on a shop tile with its photo, a short description and the usual purchase action',
  template: ProductCard,
  args: {
    id: 'blanket',
    name: 'Merino wool blanket',
    price: 59,
    description: 'A warm throw woven from undyed merino wool.',
    image: '/images/wool-blanket.jpg',
  },
  play: async ({ assert, findByAttribute }) => {
    const image = await findByAttribute('alt', 'Merino wool blanket')
    assert({ given: 'a listing', should: 'show the product photo', actual: image?.getAttribute('src'), expected: '/images/wool-blanket.jpg' })
  },
})

export const pourOverDripperListing = story({
  intent: 'A storefront tile for a "Ceramic pour-over dripper" priced at 34 dollars that is available, so shoppers can press "Add to cart"',
  template: ProductCard,
  args: {
    id: 'dripper',
    name: 'Ceramic pour-over dripper',
    price: 34,
    description: 'A glazed single-cup dripper for slow morning coffee.',
    image: '/images/pour-over-dripper.jpg',
  },
  play: async ({ assert, findByText }) => {
    const price = await findByText('USD 34, in stock')
    const button = await findByText('Add to cart')
    assert({ given: 'an available product', should: 'show the price and stock', actual: price?.textContent, expected: 'USD 34, in stock' })
    assert({ given: 'an available product', should: 'enable adding to cart', actual: button?.disabled, expected: false })
  },
})

export const tomatoSeedKitSoldOut = story({
  intent: 'Show a garden-shop card for the "Heirloom tomato seed kit" at 12 dollars that has run out, so its "Add to cart" button is greyed out',
  template: ProductCard,
  args: {
    id: 'seed-kit',
    name: 'Heirloom tomato seed kit',
    price: 12,
    description: 'Six heirloom varieties with planting guides for spring sowing.',
    image: '/images/tomato-seed-kit.jpg',
    inStock: false,
  },
  play: async ({ assert, findByText }) => {
    const stock = await findByText('USD 12, out of stock')
    const button = await findByText('Add to cart')
    assert({ given: 'a sold-out seed kit', should: 'say it is out of stock', actual: stock?.textContent, expected: 'USD 12, out of stock' })
    assert({ given: 'a sold-out seed kit', should: 'disable adding to cart', actual: button?.disabled, expected: true })
  },
})

export const concertUkuleleListing = story({
  intent: 'Build a music-store tile for a "Concert ukulele" costing 149 dollars, currently available, with its photo and the blurb "Solid mahogany top and nylon strings for a warm tone."',
  template: ProductCard,
  args: {
    id: 'ukulele',
    name: 'Concert ukulele',
    price: 149,
    description: 'Solid mahogany top and nylon strings for a warm tone.',
    image: '/images/concert-ukulele.jpg',
    inStock: true,
  },
  play: async ({ assert, findByText }) => {
    const blurb = await findByText('Solid mahogany top and nylon strings for a warm tone.')
    const button = await findByText('Add to cart')
    assert({ given: 'an available ukulele', should: 'show its blurb', actual: blurb?.textContent, expected: 'Solid mahogany top and nylon strings for a warm tone.' })
    assert({ given: 'an available ukulele', should: 'let shoppers buy it', actual: button?.disabled, expected: false })
  },
})

export const lisbonFlightCard = story({
  intent: 'A trip card titled "Flight to Lisbon" showing "Departs 6 June, 07:45", with a "View itinerary for the Lisbon flight" link and an "Online check-in" button that stays disabled until check-in opens',
  template: () => (
    <Card headingId='lisbon-flight-title' title='Flight to Lisbon'>
      <p {...styles.meta}>Departs 6 June, 07:45</p>
      <a href='/trips/lisbon/itinerary' {...styles.link}>
        View itinerary for the Lisbon flight
      </a>
      <footer {...styles.actions}>
        <CardButton disabled={true}>Online check-in</CardButton>
      </footer>
    </Card>
  ),
  play: async ({ assert, findByText }) => {
    const checkIn = await findByText('Online check-in')
    const link = await findByText('View itinerary for the Lisbon flight')
    assert({ given: 'check-in not open yet', should: 'disable the check-in button', actual: checkIn?.disabled, expected: true })
    assert({ given: 'a booked flight', should: 'link to the itinerary', actual: link?.getAttribute('href'), expected: '/trips/lisbon/itinerary' })
  },
})

export const dailyStepGoalCard = story({
  intent: 'Create a read-only "Daily step goal" card that reports "8,432 of 10,000 steps" above a line of encouragement, with no buttons at all',
  template: () => (
    <Card headingId='step-goal-title' title='Daily step goal'>
      <p {...styles.meta}>8,432 of 10,000 steps</p>
      <p {...styles.body}>About fifteen more minutes of walking will get you there.</p>
    </Card>
  ),
  play: async ({ assert, findByAttribute }) => {
    const article = await findByAttribute('aria-labelledby', 'step-goal-title')
    assert({ given: 'a read-only summary', should: 'have no buttons', actual: article?.querySelectorAll('button').length, expected: 0 })
  },
})

export const shipmentTrackingCard = story({
  intent: 'Design a parcel card headed "Shipment 4821" with the status "Out for delivery" and three enabled actions: "Track parcel", "Change delivery day" and "Report a problem"',
  template: () => (
    <Card headingId='shipment-title' title='Shipment 4821'>
      <p {...styles.meta}>Out for delivery</p>
      <footer {...styles.actions}>
        <CardButton p-trigger={{ click: 'trackParcel' }}>Track parcel</CardButton>
        <CardButton p-trigger={{ click: 'changeDeliveryDay' }}>Change delivery day</CardButton>
        <CardButton p-trigger={{ click: 'reportProblem' }}>Report a problem</CardButton>
      </footer>
    </Card>
  ),
  play: async ({ assert, findByAttribute }) => {
    const article = await findByAttribute('aria-labelledby', 'shipment-title')
    assert({ given: 'a parcel in transit', should: 'offer three actions', actual: article?.querySelectorAll('button:not([disabled])').length, expected: 3 })
  },
})
