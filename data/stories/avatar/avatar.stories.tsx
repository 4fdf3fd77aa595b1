import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './avatar.css.ts'

export const meta = {
  title: 'Avatar',
  intent: 'Create an avatar showing the initials "MK" for Maya Kim when no photo is available',
}

type Person = { name: string; initials: string; src?: string }

const Avatar: FT<{
  name: string
  initials: string
  src?: string
  size?: 'small' | 'medium' | 'large'
}> = ({ name, initials, src, size = 'medium', ...rest }) => {
  const sizing = joinStyles(styles.avatar, size === 'small' && styles.small, size === 'large' && styles.large)
  if (src) {
    return (
      <span {...sizing} {...rest}>
        <img src={src} alt={name} {...styles.image} />
      </span>
    )
  }
  return (
    <span role='img' aria-label={name} {...joinStyles(sizing, styles.fallback)} {...rest}>
      {initials}
    </span>
  )
}

const AvatarWithStatus: FT<Person & { status: 'online' | 'away' }> = ({ name, initials, src, status }) => (
  <span {...styles.wrapper}>
    <Avatar name={name} initials={initials} src={src} />
    <span {...joinStyles(styles.status, status === 'online' && styles.online, status === 'away' && styles.away)} aria-hidden='true'></span>
    <span {...styles.visuallyHidden}>{status === 'online' ? 'Online' : 'Away'}</span>
  </span>
)

const AvatarGroup: FT<{ label: string; people?: Person[]; max?: number }> = ({ label, people = [], max = 3 }) => {
  const shown = people.filter((person, index) => index < max)
  const hidden = people.length - shown.length
  return (
    <ul aria-label={label} {...styles.group}>
      {shown.map((person) => (
        <li {...styles.groupItem}>
          <Avatar name={person.name} initials={person.initials} src={person.src} size='small' />
        </li>
      ))}
      {hidden > 0 && (
        <li {...styles.groupItem}>
          <span role='img' aria-label={`${hidden} more people`} {...joinStyles(styles.avatar, styles.small, styles.fallback)}>
            {`+${hidden}`}
          </span>
        </li>
      )}
    </ul>
  )
}

export const photoAvatar = story({
  intent: 'Create a profile photo avatar for Alan Turing with descriptive alt text',
  template: Avatar,
  args: { name: 'Alan Turing', initials: 'AT', src: '/images/alan-turing.jpg' },
  play: async ({ assert, findByAttribute }) => {
    const image = await findByAttribute('alt', 'Alan Turing')
    assert({ given: 'an avatar with a photo', should: 'have alt text', actual: Boolean(image), expected: true })
  },
})

export const initialsFallback = story({
  template: Avatar,
  args: { name: 'Maya Kim', initials: 'MK' },
})

export const largeInitialsAvatar = story({
  intent: 'Create a large initials avatar for the "Design Team" account labelled for screen readers',
  template: Avatar,
  args: { name: 'Design Team', initials: 'DT', size: 'large' },
})

export const onlineStatusAvatar = story({
  intent: 'Create an avatar for Linus Lee with a green online indicator that is announced as "Online"',
  template: AvatarWithStatus,
  args: { name: 'Linus Lee', initials: 'LL', src: '/images/linus-lee.jpg', status: 'online' },
})

export const projectMembersGroup = story({
  intent: 'Create an overlapping group of small avatars for project members showing three people and a "+2" overflow',
  template: AvatarGroup,
  args: {
    label: 'Project members',
    max: 3,
    people: [
      { name: 'Ada Lovelace', initials: 'AL', src: '/images/ada.jpg' },
      { name: 'Katherine Johnson', initials: 'KJ' },
      { name: 'Edsger Dijkstra', initials: 'ED', src: '/images/edsger.jpg' },
      { name: 'Barbara Liskov', initials: 'BL' },
      { name: 'Ken Thompson', initials: 'KT' },
    ],
  },
})

export const twoReviewersNoOverflow = story({
  intent: 'List the two reviewers of a pull request, Omar Haddad and Chen Wei, as a "Reviewers" group of faces without any "+N" counter',
  template: AvatarGroup,
  args: {
    label: 'Reviewers',
    people: [
      { name: 'Omar Haddad', initials: 'OH', src: '/images/omar.jpg' },
      { name: 'Chen Wei', initials: 'CW' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const list = await findByAttribute('aria-label', 'Reviewers')
    assert({ given: 'two reviewers', should: 'show exactly two items', actual: list?.querySelectorAll('li').length, expected: 2 })
  },
})

export const channelMembersCappedAtTwo = story({
  intent: 'For a nine-person chat channel, a "Channel members" group showing only Ines Duarte and Tom Okafor and counting everyone else as "7 more people"',
  template: AvatarGroup,
  args: {
    label: 'Channel members',
    max: 2,
    people: [
      { name: 'Ines Duarte', initials: 'ID', src: '/images/ines.jpg' },
      { name: 'Tom Okafor', initials: 'TO', src: '/images/tom.jpg' },
      { name: 'Sara Lind', initials: 'SL' },
      { name: 'Raj Patel', initials: 'RP' },
      { name: 'Mia Novak', initials: 'MN' },
      { name: 'Leo Rossi', initials: 'LR' },
      { name: 'Ana Silva', initials: 'AS' },
      { name: 'Kofi Mensah', initials: 'KM' },
      { name: 'Yuki Sato', initials: 'YS' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const overflow = await findByAttribute('aria-label', '7 more people')
    assert({ given: 'nine members and room for two', should: 'count the other seven', actual: overflow?.textContent, expected: '+7' })
  },
})

export const sharedDocumentViewers = story({
  intent: 'Show who a budget spreadsheet is "Shared with": photo faces for Priya Nair, Jonas Berg and Lucia Ferraro, all three visible',
  template: AvatarGroup,
  args: {
    label: 'Shared with',
    people: [
      { name: 'Priya Nair', initials: 'PN', src: '/images/priya.jpg' },
      { name: 'Jonas Berg', initials: 'JB', src: '/images/jonas.jpg' },
      { name: 'Lucia Ferraro', initials: 'LF', src: '/images/lucia.jpg' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const list = await findByAttribute('aria-label', 'Shared with')
    const photo = await findByAttribute('alt', 'Lucia Ferraro')
    assert({ given: 'three collaborators', should: 'show three faces', actual: list?.querySelectorAll('li').length, expected: 3 })
    assert({ given: 'a collaborator with a photo', should: 'use the photo', actual: photo?.getAttribute('src'), expected: '/images/lucia.jpg' })
  },
})

export const nurseAwayInitials = story({
  intent: 'Show the clinic nurse Amara Osei as initials "AO" with an away dot that screen readers hear as "Away"',
  template: AvatarWithStatus,
  args: { name: 'Amara Osei', initials: 'AO', status: 'away' },
  play: async ({ assert, findByAttribute }) => {
    const avatar = await findByAttribute('aria-label', 'Amara Osei')
    assert({ given: 'an avatar without a photo', should: 'show the initials', actual: avatar?.textContent, expected: 'AO' })
  },
})

export const pilotSmallPhoto = story({
  intent: 'Create a small photo avatar for the flight captain Hana Suzuki (initials HS) using /images/hana-suzuki.jpg',
  template: Avatar,
  args: { name: 'Hana Suzuki', initials: 'HS', src: '/images/hana-suzuki.jpg', size: 'small' },
  play: async ({ assert, findByAttribute }) => {
    const image = await findByAttribute('alt', 'Hana Suzuki')
    assert({ given: 'a photo avatar', should: 'load the given picture', actual: image?.getAttribute('src'), expected: '/images/hana-suzuki.jpg' })
  },
})

export const conductorLargePhoto = story({
  intent: 'A big portrait avatar of orchestra conductor Marin Alsop, initials MA, drawn from /images/marin-alsop.jpg on her concert page',
  template: Avatar,
  args: { name: 'Marin Alsop', initials: 'MA', src: '/images/marin-alsop.jpg', size: 'large' },
})

export const deliveryCrewOnlyOneShown = story({
  intent: 'Build a "Delivery crew" stack that shows just the first driver, Pedro Alves, and folds Grace Mwangi, Tariq Aziz and Elena Petrova into a "+3" bubble',
  template: AvatarGroup,
  args: {
    label: 'Delivery crew',
    max: 1,
    people: [
      { name: 'Pedro Alves', initials: 'PA', src: '/images/pedro.jpg' },
      { name: 'Grace Mwangi', initials: 'GM' },
      { name: 'Tariq Aziz', initials: 'TA' },
      { name: 'Elena Petrova', initials: 'EP' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const overflow = await findByAttribute('aria-label', '3 more people')
    assert({ given: 'four drivers and room for one', should: 'count the other three', actual: overflow?.textContent, expected: '+3' })
  },
})

export const studyGroupFiveInitials = story({
  intent: 'Show a "Study group" row of five initials-only faces (Noah Berg, Zara Ali, Finn Walsh, Lina Haas, Ravi Rao) with a limit of five so nobody is hidden',
  template: AvatarGroup,
  args: {
    label: 'Study group',
    max: 5,
    people: [
      { name: 'Noah Berg', initials: 'NB' },
      { name: 'Zara Ali', initials: 'ZA' },
      { name: 'Finn Walsh', initials: 'FW' },
      { name: 'Lina Haas', initials: 'LH' },
      { name: 'Ravi Rao', initials: 'RR' },
    ],
  },
  play: async ({ assert, findByAttribute }) => {
    const list = await findByAttribute('aria-label', 'Study group')
    assert({ given: 'five members and a limit of five', should: 'show five items and no counter', actual: list?.querySelectorAll('li').length, expected: 5 })
  },
})
