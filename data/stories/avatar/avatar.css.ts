import { createStyles } from 'plaited'
import { avatarTokens } from './avatar.tokens.ts'

export const styles = createStyles({
  avatar: {
    position: 'relative',
    display: 'inline-flex',
    alignItems: 'center',
    justifyContent: 'center',
    width: '3rem',
    height: '3rem',
    borderRadius: '50%',
    overflow: 'hidden',
    fontWeight: '600',
  },
  small: {
    width: '2rem',
    height: '2rem',
    fontSize: '0.75rem',
  },
  large: {
    width: '4.5rem',
    height: '4.5rem',
    fontSize: '1.5rem',
  },
  image: {
    width: '100%',
    height: '100%',
    objectFit: 'cover',
  },
  fallback: {
    backgroundColor: avatarTokens.fallback,
    color: avatarTokens.fallbackText,
  },
  wrapper: {
    position: 'relative',
    display: 'inline-block',
  },
  status: {
    position: 'absolute',
    right: '0',
    bottom: '0',
    width: '0.75rem',
    height: '0.75rem',
    borderRadius: '50%',
    borderWidth: '2px',
    borderStyle: 'solid',
    borderColor: avatarTokens.ring,
  },
  online: {
    backgroundColor: avatarTokens.online,
  },
  away: {
    backgroundColor: avatarTokens.away,
  },
  group: {
    display: 'flex',
    listStyle: 'none',
    margin: '0',
    padding: '0',
  },
  groupItem: {
    marginLeft: '-0.5rem',
  },
  visuallyHidden: {
    position: 'absolute',
    width: '1px',
    height: '1px',
    overflow: 'hidden',
    clip: 'rect(0 0 0 0)',
    whiteSpace: 'nowrap',
  },
})
