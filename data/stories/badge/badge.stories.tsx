import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './badge.css.ts'

export const meta = {
  title: 'Badge',
  intent: 'Create a neutral "Draft" status badge',
}

type Tone = 'neutral' | 'success' | 'warning' | 'danger' | 'info'

const Badge: FT<{ tone?: Tone }> = ({ tone = 'neutral', children, ...rest }) => (
  <span
    {...joinStyles(
      styles.badge,
      tone === 'neutral' && styles.neutral,
      tone === 'success' && styles.success,
      tone === 'warning' && styles.warning,
      tone === 'danger' && styles.danger,
      tone === 'info' && styles.info,
    )}
    {...rest}
  >
    {children}
  </span>
)

const StatusList: FT<{ label: string; statuses?: { label: string; tone: Tone }[] }> = ({ label, statuses = [] }) => (
  <ul aria-label={label} {...styles.list}>
    {statuses.map((status) => (
      <li>
        <Badge tone={status.tone}>{status.label}</Badge>
      </li>
    ))}
  </ul>
)

const InboxButton: FT<{ unread: number }> = ({ unread }) => (
  <button type='button' p-trigger={{ click: 'openInbox' }} {...styles.inboxButton}>
    Inbox
    {unread > 0 && (
      <span {...joinStyles(styles.badge, styles.count)}>
        {unread > 99 ? '99+' : unread}
        <span {...styles.visuallyHidden}> unread messages</span>
      </span>
    )}
  </button>
)

export const draftBadge = story({
  template: Badge,
  args: { tone: 'neutral', children: 'Draft' },
})

export const deploymentStatuses = story({
  intent: 'Create a list of deployment status badges: "Live" in green, "Queued" in amber and "Failed" in red',
  template: StatusList,
  args: {
    label: 'Deployment statuses',
    statuses: [
      { label: 'Live', tone: 'success' },
      { label: 'Queued', tone: 'warning' },
      { label: 'Failed', tone: 'danger' },
    ],
  },
})

export const unreadCountBadge = story({
  intent: 'Create an "Inbox" button with a red count badge announcing 12 unread messages',
  template: InboxButton,
  args: { unread: 12 },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Inbox')
    assert({ given: 'twelve unread messages', should: 'include the count in the name', actual: button?.textContent?.includes('12'), expected: true })
  },
})

export const betaHeadingBadge = story({
  intent: 'Create a "Reports" section heading with an info badge marking the feature as "Beta"',
  template: () => (
    <h2 {...styles.heading}>
      Reports
      <Badge tone='info'>Beta</Badge>
    </h2>
  ),
})

export const inboxCappedCount = story({
  intent: 'An Inbox control whose unread counter caps at "99+" when 250 messages are waiting',
  template: InboxButton,
  args: { unread: 250 },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Inbox')
    assert({ given: '250 unread messages', should: 'cap the visible count', actual: button?.textContent?.includes('99+'), expected: true })
  },
})

export const inboxNothingUnread = story({
  intent: 'Render the Inbox control for someone who has read everything, so no counter is shown at all',
  template: InboxButton,
  args: { unread: 0 },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Inbox')
    assert({ given: 'zero unread messages', should: 'show no count', actual: button?.textContent?.trim(), expected: 'Inbox' })
  },
})

export const orderFulfilmentStages = story({
  intent: 'Label the four fulfilment stages of an order (Paid, Packed, Shipped, Delivered) as tone-coded tags in a list named "Order fulfilment"',
  template: StatusList,
  args: {
    label: 'Order fulfilment',
    statuses: [
      { label: 'Paid', tone: 'success' },
      { label: 'Packed', tone: 'info' },
      { label: 'Shipped', tone: 'info' },
      { label: 'Delivered', tone: 'neutral' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const list = await findByAttribute('aria-label', 'Order fulfilment')
    assert({ given: 'four stages', should: 'render four items', actual: list?.querySelectorAll('li').length, expected: 4 })
  },
})

export const mailInboxFiveUnread = story({
  intent: 'Add a mail "Inbox" button whose counter badge tells screen reader users there are 5 unread messages',
  template: InboxButton,
  args: { unread: 5 },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Inbox')
    assert({ given: 'five unread messages', should: 'announce the count with its meaning', actual: button?.textContent?.includes('5 unread messages'), expected: true })
  },
})

export const messagesInboxThirtyEight = story({
  intent: 'A messaging app toolbar button labelled "Inbox" that shows a counter of 38 new emails',
  template: InboxButton,
  args: { unread: 38 },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Inbox')
    assert({ given: '38 new emails', should: 'show the exact count', actual: button?.textContent?.includes('38'), expected: true })
    assert({ given: 'a count below the cap', should: 'not cap the count', actual: button?.textContent?.includes('99+'), expected: false })
  },
})

export const overdueInvoiceBadge = story({
  intent: 'Create a red "Overdue" badge to flag an unpaid invoice',
  template: Badge,
  args: { tone: 'danger', children: 'Overdue' },
  play: async ({ assert, findByText }) => {
    const badge = await findByText('Overdue')
    assert({ given: 'an overdue invoice', should: 'show the Overdue label', actual: badge?.textContent, expected: 'Overdue' })
  },
})

export const pendingReviewBadge = story({
  intent: 'Show an amber warning badge reading "Pending review" next to a submitted article',
  template: Badge,
  args: { tone: 'warning', children: 'Pending review' },
  play: async ({ assert, findByText }) => {
    const badge = await findByText('Pending review')
    assert({ given: 'an article awaiting review', should: 'show the Pending review label', actual: badge?.textContent, expected: 'Pending review' })
  },
})

export const supportTicketPriorities = story({
  intent: 'A "Ticket priorities" legend for a help desk with tags "Low" in grey, "Medium" in blue, "High" in amber and "Urgent" in red',
  template: StatusList,
  args: {
    label: 'Ticket priorities',
    statuses: [
      { label: 'Low', tone: 'neutral' },
      { label: 'Medium', tone: 'info' },
      { label: 'High', tone: 'warning' },
      { label: 'Urgent', tone: 'danger' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const list = await findByAttribute('aria-label', 'Ticket priorities')
    assert({ given: 'four priority levels', should: 'render four tags', actual: list?.querySelectorAll('li').length, expected: 4 })
    assert({ given: 'priorities from lowest to highest', should: 'end with Urgent', actual: list?.querySelector('li:last-child')?.textContent, expected: 'Urgent' })
  },
})

export const verifiedPayeeBadge = story({
  intent: 'Mark a saved bank payee as confirmed with a green success badge that reads "Verified"',
  template: Badge,
  args: { tone: 'success', children: 'Verified' },
  play: async ({ assert, findByText }) => {
    const badge = await findByText('Verified')
    assert({ given: 'a confirmed payee', should: 'show the Verified label', actual: badge?.textContent, expected: 'Verified' })
  },
})

export const ungradedEssayBadge = story({
  intent: 'Put a plain badge in the default neutral tone saying "Not graded yet" on a student essay',
  template: Badge,
  args: { children: 'Not graded yet' },
})

export const seedlingHealthTags = story({
  intent: 'Build a gardening legend called "Seedling health" with five tags: "Thriving" green, "Sprouting" blue, "Dormant" grey, "Thirsty" amber and "Wilted" red',
  template: StatusList,
  args: {
    label: 'Seedling health',
    statuses: [
      { label: 'Thriving', tone: 'success' },
      { label: 'Sprouting', tone: 'info' },
      { label: 'Dormant', tone: 'neutral' },
      { label: 'Thirsty', tone: 'warning' },
      { label: 'Wilted', tone: 'danger' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const list = await findByAttribute('aria-label', 'Seedling health')
    assert({ given: 'five plant states', should: 'render five tags', actual: list?.querySelectorAll('li').length, expected: 5 })
    assert({ given: 'a legend ordered from healthy to wilted', should: 'start with Thriving', actual: list?.querySelector('li')?.textContent, expected: 'Thriving' })
  },
})

export const travelDeskInboxOverflow = story({
  intent: 'A travel agency "Inbox" button with 1200 new booking enquiries, so its badge only ever displays "99+"',
  template: InboxButton,
  args: { unread: 1200 },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Inbox')
    assert({ given: 'more than 99 enquiries', should: 'show the capped count', actual: button?.textContent?.includes('99+'), expected: true })
    assert({ given: 'a capped count', should: 'not show the raw number', actual: button?.textContent?.includes('1200'), expected: false })
  },
})

export const clinicInboxNinetyNine = story({
  intent: 'Show a clinic staff "Inbox" button holding exactly 99 patient notes, the largest number its badge prints in full',
  template: InboxButton,
  args: { unread: 99 },
  play: async ({ assert, findByText }) => {
    const button = await findByText('Inbox')
    assert({ given: 'exactly 99 notes', should: 'print the full number', actual: button?.textContent?.includes('99 unread messages'), expected: true })
    assert({ given: 'a count at the limit', should: 'not add a plus sign', actual: button?.textContent?.includes('99+'), expected: false })
  },
})
