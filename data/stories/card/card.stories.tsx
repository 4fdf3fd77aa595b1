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
