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
